import { maxlengthFor } from '../../core/code-points.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { breakAtSeparators } from '../break-points.js';
import { html } from '../html.js';
import { copyRow } from './copy-row.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';

export interface AppRow {
  id: string;
  name: string;
  isPublic: boolean;
  redirectUris: string[];
  createdAt: string;
}

export interface SettingsApplicationsData {
  user: { email: string };
  csrfToken: string;
  apps: AppRow[];
  /** Credentials just issued (registration or rotation): the secret is shown this once. */
  issued?: { name: string; clientId: string; secret: string | null; rotated: boolean };
  error?: string;
  /** Form values to keep after an error. */
  form?: { name: string; redirectUris: string; isPublic: boolean };
}

const day = (iso: string) => html`<time datetime="${iso}">${iso.slice(0, 10)}</time>`;

export function settingsApplicationsPage(d: SettingsApplicationsData) {
  const issued = d.issued
    ? html`<div class="notice" role="status">
  <p><strong>${d.issued.rotated ? 'New secret for' : 'Registered'} ${d.issued.name}.</strong>
  ${d.issued.secret ? 'Copy the client secret now: it will not be shown again.' : 'This is a public client: it has no secret and must use PKCE.'}</p>
  <label>Client ID
    ${copyRow('new-client-id', d.issued.clientId)}
  </label>
  ${
    d.issued.secret
      ? html`<label>Client secret
    ${copyRow('new-client-secret', d.issued.secret)}
  </label>`
      : null
  }
</div>`
    : null;
  const rows = d.apps.map(
    (a) => html`<tr data-client-id="${a.id}">
  <td>${a.name}</td>
  <td data-label="Client ID"><code>${a.id}</code>${a.isPublic ? html` <span class="muted">(public)</span>` : null}</td>
  <td data-label="Redirect URIs">${a.redirectUris.map((u) => html`<code class="url">${breakAtSeparators(u)}</code><br>`)}</td>
  <td data-label="Registered">${day(a.createdAt)}</td>
  <td class="actions-cell">
    ${a.isPublic ? null : html`<a href="/settings/applications/${a.id}/rotate" class="button small">${forRow('Rotate secret…', a.name)}</a>`}
    <a href="/settings/applications/${a.id}/delete" class="button danger small">${forRow('Delete…', a.name)}</a>
  </td>
</tr>`,
  );
  return layout(
    { title: 'Applications', user: d.user, csrfToken: d.csrfToken, active: 'applications', wide: true },
    html`<section class="card">
  <h1>Applications</h1>
  <p>Register an application to let it act for docsearch users through OAuth 2.0 (authorization code grant).
  Users approve it on a consent screen; it then calls the API with access tokens.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${issued}
  <form method="post" action="/settings/applications" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name <input type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required value="${d.form?.name ?? ''}" placeholder="e.g. My notes app"></label>
    <label>Redirect URIs, one per line
      <textarea name="redirect_uris" rows="3" required placeholder="https://app.example.com/oauth/callback">${d.form?.redirectUris ?? ''}</textarea>
    </label>
    <label class="check"><input type="checkbox" name="public" value="1"${d.form?.isPublic ? html` checked` : null}> Public client (native or browser app that can't keep a secret; PKCE required)</label>
    <button type="submit" class="primary">Register application</button>
  </form>
  <h2>Your applications</h2>
  ${
    d.apps.length === 0
      ? html`<p class="muted">No applications registered yet.</p>`
      : html`<div class="table-wrap"><table class="apps rows">
  <thead><tr><th>Name</th><th>Client ID</th><th>Redirect URIs</th><th>Registered</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
  }
  <p class="muted">Deleting an application revokes every token it holds. Rotating the secret stops the old one at once.</p>
</section>`,
  );
}
