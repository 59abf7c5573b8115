import { SCOPE_DESCRIPTIONS, SCOPES } from '../../auth/scopes.js';
import { html } from '../html.js';
import { copyRow } from './copy-row.js';
import { layout } from './layout.js';

export interface KeyRow {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface SettingsKeysData {
  user: { email: string };
  csrfToken: string;
  keys: KeyRow[];
  /** The key just generated: shown this once, never again. */
  newKey?: { key: string; name: string | null };
  error?: string;
}

/** How a key is named where its secret can't be: prefix…last 4. */
export const keyLabel = (k: Pick<KeyRow, 'prefix' | 'last4'>): string => `${k.prefix}…${k.last4}`;

const when = (iso: string | null) => (iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>` : 'never');

export function settingsKeysPage(d: SettingsKeysData) {
  const fresh = d.newKey
    ? html`<div class="notice" role="status">
  <p><strong>Copy your new API key now.</strong> It will not be shown again.</p>
  ${copyRow('new-key', d.newKey.key, 'New API key')}
</div>`
    : null;
  const rows = d.keys.map(
    (k) => html`<tr>
  <td>${k.name ?? html`<em>unnamed</em>`}</td>
  <td data-label="Key"><code>${keyLabel(k)}</code></td>
  <td data-label="Scopes">${k.scopes.join(' ')}</td>
  <td data-label="Created">${when(k.createdAt)}</td>
  <td data-label="Last used">${when(k.lastUsedAt)}</td>
  <td><a href="/settings/keys/${k.id}/revoke" class="danger-link" aria-label="Revoke ${k.name ?? keyLabel(k)}…">Revoke…</a></td>
</tr>`,
  );
  return layout(
    { title: 'API Keys', user: d.user, csrfToken: d.csrfToken, active: 'keys' },
    html`<section class="card">
  <h1>API Keys</h1>
  <p>API keys let scripts and CI call the docsearch API as you: send <code>Authorization: Bearer &lt;key&gt;</code>.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${fresh}
  <form method="post" action="/settings/keys" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name (optional) <input type="text" name="name" maxlength="100" placeholder="e.g. CI uploads"></label>
    <fieldset><legend>Scopes</legend>
      ${SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}" checked> <code>${s}</code> — ${SCOPE_DESCRIPTIONS[s]}</label>`)}
    </fieldset>
    <button type="submit">Generate new API key</button>
  </form>
  <h2>Active keys</h2>
  ${
    d.keys.length === 0
      ? html`<p class="muted">No API keys yet.</p>`
      : html`<table class="keys rows">
  <thead><tr><th>Name</th><th>Key</th><th>Scopes</th><th>Created</th><th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
  }
</section>`,
  );
}
