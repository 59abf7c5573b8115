import { type GrantScope, SCOPE_DESCRIPTIONS } from '../../auth/scopes.js';
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
  app: { name: string; clientId: string; selfRegistered: SelfRegisteredApp | null };
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

/** The consent screen: which application, what it may do (in plain words), approve or deny. */
export function consentPage(d: ConsentData) {
  return layout(
    { title: `Authorize ${d.app.name}`, user: d.user, csrfToken: d.csrfToken },
    html`<section class="card narrow consent">
  <h1>Authorize <span class="app-name">${d.app.name}</span>?</h1>
  ${d.app.selfRegistered ? selfRegisteredNotice(d.app.selfRegistered, d.redirectHost) : null}
  <p><strong>${d.app.name}</strong> wants to access your docsearch account <strong>${d.user.email}</strong>. It will be able to:</p>
  <ul class="scopes">
    ${d.scopes.map((s) => html`<li data-scope="${s}">${SCOPE_DESCRIPTIONS[s]} <code class="muted">${s}</code></li>`)}
  </ul>
  <p class="muted">After you decide you will be sent back to <code>${d.redirectHost}</code>. You can revoke access at any time under Settings → Connected apps.</p>
  <form method="post" action="/oauth/consent">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${Object.entries(d.params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <div class="actions">
      <button type="submit" name="decision" value="approve" id="approve">Allow</button>
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
