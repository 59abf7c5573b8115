import { isGrantScope, SCOPE_DESCRIPTIONS } from '../../auth/scopes.js';
import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';

export interface ConnectedRow {
  clientId: string;
  name: string;
  scopes: string[];
  grantedAt: string;
  lastIssuedAt: string;
}

export interface SettingsConnectedData {
  user: { email: string };
  csrfToken: string;
  apps: ConnectedRow[];
}

const day = (iso: string) => html`<time datetime="${iso}">${formatTime(Date.parse(iso))}</time>`;

/** Applications the user granted access to, what each may do, and a revoke button. */
export function settingsConnectedPage(d: SettingsConnectedData) {
  const rows = d.apps.map(
    (a) => html`<tr data-client-id="${a.clientId}">
  <td>${a.name}</td>
  <td data-label="May"><ul class="scopes">${a.scopes.map((s) => html`<li>${isGrantScope(s) ? SCOPE_DESCRIPTIONS[s] : s} <code class="muted">${s}</code></li>`)}</ul></td>
  <td data-label="Allowed">${day(a.grantedAt)}</td>
  <td data-label="Last token">${day(a.lastIssuedAt)}</td>
  <td class="actions-cell"><a href="/settings/connected/${a.clientId}/revoke" class="button danger small">${forRow('Revoke access…', a.name)}</a></td>
</tr>`,
  );
  return layout(
    { title: 'Connected apps', user: d.user, csrfToken: d.csrfToken, active: 'connected', wide: true },
    html`<section class="card">
  <h1>Connected apps</h1>
  <p>Applications you allowed to use your docsearch account. Revoking access ends their tokens at once.</p>
  ${
    d.apps.length === 0
      ? html`<p class="muted">No application has access to your account.</p>`
      : html`<div class="table-wrap"><table class="connected rows">
  <thead><tr><th>Application</th><th>May</th><th>Allowed</th><th>Last token</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
  }
</section>`,
  );
}
