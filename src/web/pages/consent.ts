import { type GrantScope, SCOPE_DESCRIPTIONS } from '../../auth/scopes.js';
import { displayName, nameConcerns } from '../display-text.js';
import { html } from '../html.js';
import { layout } from './layout.js';

/** A client that registered itself: nobody here vouches for its name. */
export interface SelfRegisteredApp {
  how: 'dynamic' | 'metadata_document';
  /** Host of the home page it names (client_uri), shown, never fetched. */
  clientUriHost: string | null;
  /** For a metadata-document client: the document's URL (its client_id). */
  documentUrl: string | null;
}

export interface ConsentData {
  user: { email: string };
  csrfToken: string;
  /** `origin`: where the application is known to come from — its metadata document's host, else where it returns to. */
  app: { name: string; clientId: string; selfRegistered: SelfRegisteredApp | null; origin: string };
  /** Host (and port) the browser returns to, so the user sees where the code goes. */
  redirectHost: string;
  scopes: GrantScope[];
  /** The authorization request's parameters, posted back with the decision. */
  params: Record<string, string>;
}

/**
 * For a client that registered itself: its name is its own claim. Says how it registered, that docsearch has
 * not verified it, the home page it names and where the browser goes back to, so the user judges by those.
 */
function selfRegisteredNotice(app: SelfRegisteredApp, redirectHost: string) {
  const how =
    app.how === 'dynamic'
      ? html`This application <strong>registered itself with this server (Dynamic Client Registration)</strong>`
      : html`This application is <strong>identified by its metadata document at <code>${app.documentUrl}</code></strong>`;
  return html`<p class="error flash self-registered">${how}; docsearch has not verified it. Its name is what it says about itself${
    app.clientUriHost ? html`, and it names <code class="client-uri-host">${app.clientUriHost}</code> as its home page` : null
  }. It will receive access at <code class="redirect-host">${redirectHost}</code>. Allow it only if you started this from an application you trust.</p>`;
}

/**
 * A name that could pass for another (letters of two alphabets, look-alike letters, invisible characters, stacked
 * marks): said in words, with where the application comes from, which it cannot fake.
 */
function nameWarning(name: string, origin: string) {
  const concerns = nameConcerns(name);
  if (concerns.length === 0) return null;
  return html`<p class="error flash name-warning" role="alert"><strong>Careful:</strong> this application's name ${concerns.join(', and ')}. A name like that can imitate another application's. Judge it by where it comes from: <strong><code class="origin">${origin}</code></strong>.</p>`;
}

/**
 * The consent screen: which application, what it may do (in plain words), approve or deny. The name is shown
 * isolated (<bdi>) and tidied (display-text.ts), in a box it cannot draw out of, with the application's origin.
 */
export function consentPage(d: ConsentData) {
  const name = displayName(d.app.name);
  return layout(
    { title: `Authorize ${name}`, user: d.user, csrfToken: d.csrfToken },
    html`<section class="card narrow consent">
  <h1>Authorize <bdi class="app-name">${name}</bdi>?</h1>
  <p class="client-origin">From <strong><code class="origin">${d.app.origin}</code></strong></p>
  ${nameWarning(d.app.name, d.app.origin)}
  ${d.app.selfRegistered ? selfRegisteredNotice(d.app.selfRegistered, d.redirectHost) : null}
  <p><strong><bdi class="app-name">${name}</bdi></strong> wants to access your docsearch account <strong>${d.user.email}</strong>. It will be able to:</p>
  <ul class="scopes">
    ${d.scopes.map((s) => html`<li data-scope="${s}">${SCOPE_DESCRIPTIONS[s]} <code class="muted">${s}</code></li>`)}
  </ul>
  <p class="muted">After you decide you will be sent back to <code>${d.redirectHost}</code>. You can revoke access at any time under Settings → Connected apps.</p>
  <form method="post" action="/oauth/consent">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${Object.entries(d.params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <div class="actions">
      <button type="submit" name="decision" value="approve" id="approve" class="primary">Allow</button>
      <button type="submit" name="decision" value="deny" id="deny" class="secondary">Deny</button>
    </div>
  </form>
</section>`,
  );
}

/** An authorize request that can't be sent back to the application (unknown client, unregistered redirect URI). */
export function oauthErrorPage(d: { error: string; description: string }) {
  return layout(
    { title: 'Authorization request refused' },
    html`<section class="card narrow">
  <h1>This authorization request can't be completed</h1>
  <p>${d.description}.</p>
  <p class="muted">Error code: <code class="oauth-error">${d.error}</code>. The application that sent you here may be misconfigured; you have not been redirected to it.</p>
</section>`,
  );
}
