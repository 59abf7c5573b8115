import { maxlengthFor } from '../../core/code-points.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../auth/scopes.js';
import { DAY_MS } from '../../core/key-expiry.js';
import { formatTime, plural } from '../format.js';
import { html } from '../html.js';
import { copyRow } from './copy-row.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';

export interface KeyRow {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  scopes: string[];
  /** The projects the key is limited to (their names); null: every project its owner may read. */
  projectNames?: string[] | null;
  createdAt: string;
  lastUsedAt: string | null;
  /** When the key stops authenticating (ms); null: never. */
  expiresAt: number | null;
  /** Whether it has, by the daemon's clock. */
  expired: boolean;
}

/**
 * The lifetimes the form offers (GitHub's, for its fine-grained tokens), 30 days first: a key that expires is the
 * safer default, and "No expiration" stays one choice away for a key that must not.
 */
export const EXPIRY_CHOICES = [
  { value: '7', days: 7, label: '7 days' },
  { value: '30', days: 30, label: '30 days' },
  { value: '60', days: 60, label: '60 days' },
  { value: '90', days: 90, label: '90 days' },
  { value: '365', days: 365, label: '1 year' },
  { value: 'never', days: null, label: 'No expiration' },
] as const;
/** What the form preselects, and what a post without the field (a page from before expiry existed) gets. */
export const DEFAULT_EXPIRY = '30';

export interface SettingsKeysData {
  user: { email: string };
  csrfToken: string;
  keys: KeyRow[];
  /** The daemon's clock, for "expires in N days". */
  now: number;
  /** The key just generated: shown this once, never again. */
  newKey?: { key: string; name: string | null };
  /** The projects a key may be limited to: every one the person may read. */
  projects: { id: string; name: string }[];
  error?: string;
  /** The form as it was sent when refused: its name, scopes, projects and expiry come back as chosen, not the defaults. */
  form?: { name: string; scopes: string[]; projects: string[]; expires: string };
}

/** How a key is named where its secret can't be: prefix…last 4. */
export const keyLabel = (k: Pick<KeyRow, 'prefix' | 'last4'>): string => `${k.prefix}…${k.last4}`;

const when = (iso: string | null) => (iso ? html`<time datetime="${iso}">${formatTime(Date.parse(iso))}</time>` : 'never');

/** "Expired", "in 3 days", "in 5 hours" or "No expiration", with the exact moment beside it for a key that expires. */
function expiry({ expiresAt: at, expired }: Pick<KeyRow, 'expiresAt' | 'expired'>, now: number) {
  if (at === null) return html`<span class="muted">No expiration</span>`;
  const moment = html`<time datetime="${new Date(at).toISOString()}">${formatTime(at)}</time>`;
  if (expired) return html`<strong class="error">Expired</strong> <span class="muted">${moment}</span>`;
  const left = at - now;
  // Rounded: a key made for 90 days reads "in 90 days", not 89 and some hours.
  const days = Math.round(left / DAY_MS);
  return html`in ${days >= 1 ? plural(days, 'day') : plural(Math.max(1, Math.round(left / 3_600_000)), 'hour')} <span class="muted">(${moment})</span>`;
}

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
  <td data-label="Projects">${k.projectNames ? k.projectNames.join(', ') : html`<span class="muted">all</span>`}</td>
  <td data-label="Created">${when(k.createdAt)}</td>
  <td data-label="Last used">${when(k.lastUsedAt)}</td>
  <td data-label="Expires">${expiry(k, d.now)}</td>
  <td class="actions-cell"><a href="/settings/keys/${k.id}/revoke" class="button danger small">${forRow('Revoke…', k.name ?? keyLabel(k))}</a></td>
</tr>`,
  );
  return layout(
    { title: 'API Keys', user: d.user, csrfToken: d.csrfToken, active: 'keys', wide: true },
    html`<section class="card">
  <h1>API Keys</h1>
  <p>API keys let scripts and CI call the docsearch API as you: send <code>Authorization: Bearer &lt;key&gt;</code>.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${fresh}
  <form method="post" action="/settings/keys" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name (optional) <input type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" placeholder="e.g. CI uploads"${d.form?.name ? html` value="${d.form.name}"` : null}></label>
    <fieldset><legend>Scopes</legend>
      ${SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${!d.form || d.form.scopes.includes(s) ? html` checked` : null}> <code>${s}</code> — ${SCOPE_DESCRIPTIONS[s]}</label>`)}
    </fieldset>
    ${
      d.projects.length > 0
        ? html`<fieldset aria-describedby="projects-help"><legend>Projects</legend>
      <p class="hint" id="projects-help">Leave all unticked for a key that reaches every project you may read (now and later); tick some to limit the key to them.</p>
      ${d.projects.map((p) => html`<label class="check"><input type="checkbox" name="projects" value="${p.id}"${d.form?.projects.includes(p.id) ? html` checked` : null}> ${p.name}</label>`)}
    </fieldset>`
        : null
    }
    <label>Expiration <select name="expires" aria-describedby="expires-help">
      ${EXPIRY_CHOICES.map((c) => html`<option value="${c.value}"${c.value === (d.form?.expires || DEFAULT_EXPIRY) ? html` selected` : null}>${c.label}</option>`)}
    </select></label>
    <p class="muted" id="expires-help">An expired key gets <code>401</code> saying when it expired; it stays listed here until you revoke it.</p>
    <button type="submit" class="primary">Generate new API key</button>
  </form>
  <h2>Your keys</h2>
  ${
    d.keys.length === 0
      ? html`<p class="muted">No API keys yet.</p>`
      : html`<div class="table-wrap"><table class="keys rows">
  <thead><tr><th>Name</th><th>Key</th><th>Scopes</th><th>Projects</th><th>Created</th><th>Last used</th><th>Expires</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
  }
</section>`,
  );
}
