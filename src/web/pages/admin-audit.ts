import { codePointCount, maxlengthFor } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';
import { MAX_SOURCE_URL_CHARS } from '../../core/source-limits.js';
import { breakAtSeparators } from '../break-points.js';
import { deviceOf } from '../device.js';
import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';

export interface AuditRow {
  id: string;
  at: number;
  type: string;
  actorEmail: string | null;
  via: string;
  by: string;
  targetType: string | null;
  targetLabel: string | null;
  targetId: string | null;
  clientIp: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

export interface AdminAuditData {
  user: { email: string };
  csrfToken: string;
  events: AuditRow[];
  /** The filters as given (the form shows them again). */
  filters: { type?: string; actor?: string; target?: string; client_ip?: string; since?: string; until?: string };
  /** The query string of the next (older) page, or null. */
  older: string | null;
  error?: string;
}

/** How an event's actor came: said only where it adds to the name (a key, an app, the operator, the system). */
const VIA: Record<string, string> = { api_key: 'API key', oauth: 'app', operator: 'operator', system: 'system' };

/** Who caused it, where that is not the actor themselves: an admin's work, the provider's word, a source's pass. */
const BY: Record<string, string> = { admin: 'admin', sso: 'identity provider', source: 'source', operator: 'operator', system: 'system' };

/** Who did it: the account (and how, when not from the web or for themselves), the operator, or nobody signed in (a failed sign-in). */
function who(e: AuditRow) {
  const how = BY[e.by] ?? VIA[e.via];
  if (e.actorEmail) return html`<a href="/admin/audit?${new URLSearchParams({ actor: e.actorEmail }).toString()}">${forRow(e.actorEmail, '(every event by them)')}</a>${how ? html` <span class="badge">${how}</span>` : null}`;
  return how ? html`<em>${how}</em>` : html`<em>nobody signed in</em>`;
}

/**
 * What it was done to, linked to every event about it by the name it had (the Target filter takes a name or an id;
 * the ids are shown nowhere on the page): "what else happened to bob@…" finds his account, invitations and mail.
 */
const target = (e: AuditRow) => {
  const name = e.targetLabel ?? e.targetId;
  // A name the filter cannot take back as it is (too long, or spaces the form trims) is asked for by its id.
  const key = name && codePointCount(name) <= MAX_SOURCE_URL_CHARS && name === name.trim() ? name : e.targetId;
  const words = name ? breakAtSeparators(name) : null;
  return html`${e.targetType} ${key ? html`<a href="/admin/audit?${new URLSearchParams({ target: key }).toString()}">${words}</a>` : words}`;
};

/** A hash (an upload's sha256) shortened as git shortens commits: it has no place to wrap, and the API has it whole. */
const shortHash = (v: string): string => (/^[0-9a-f]{32,}$/.test(v) ? `${v.slice(0, 12)}…` : v);

const detailText = (details: Record<string, unknown>): string =>
  Object.entries(details)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? shortHash(v) : JSON.stringify(v)}`)
    .join('; ');

/** Admin → Audit log: every recorded event, newest first, with the API's filters. */
export function adminAuditPage(d: AdminAuditData) {
  // A target may be a source's URL, the longest of the names a target keeps; the other filters are shorter than an e-mail.
  const field = (name: keyof AdminAuditData['filters'], label: string, placeholder: string, chars = MAX_EMAIL_CHARS) =>
    html`<label>${label} <input type="text" name="${name}" value="${d.filters[name] ?? ''}" placeholder="${placeholder}" maxlength="${maxlengthFor(chars)}"></label>`;
  const rows = d.events.map(
    (e) => html`<tr>
  <td data-label="When"><time datetime="${new Date(e.at).toISOString()}">${formatTime(e.at)}</time></td>
  <td data-label="Event"><code>${e.type}</code></td>
  <td data-label="Who">${who(e)}</td>
  <td data-label="What">${e.targetType ? target(e) : null}</td>
  <td data-label="From">${e.clientIp ? html`<span class="nowrap">${e.clientIp}</span>` : null}${
    e.userAgent ? html`${e.clientIp ? html`<br>` : null}<span class="muted" title="${e.userAgent}">${deviceOf(e.userAgent)}</span>` : null
  }</td>
  <td data-label="Details" class="details">${breakAtSeparators(detailText(e.details))}</td>
</tr>`,
  );
  return layout(
    { title: 'Audit log', user: d.user, csrfToken: d.csrfToken, active: 'audit', wide: true },
    html`<section class="card">
  <h1>Audit log</h1>
  <p class="muted">Who did what, from where: kept for the days the operator set (<code>--audit-retention-days</code>). Also at <code>GET /api/v1/audit-events</code>.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="get" action="/admin/audit" class="filters" role="search" aria-label="Filter the audit log">
    ${field('type', 'Event', 'sign_in. or document.deleted')}
    ${field('actor', 'Who', 'e-mail or usr_…')}
    ${field('target', 'Target', 'e-mail, name or doc_…', MAX_SOURCE_URL_CHARS)}
    ${field('client_ip', 'Address', '203.0.113.7')}
    ${field('since', 'Since', '2026-03-01')}
    ${field('until', 'Before', '2026-04-01')}
    <button type="submit">Filter</button>
  </form>
  ${
    d.events.length === 0
      ? html`<p class="muted" id="no-events">No events match.</p>`
      : html`<div class="table-wrap"><table class="rows" id="audit-events"><thead><tr><th>When</th><th>Event</th><th>Who</th><th>What</th><th>From</th><th>Details</th></tr></thead><tbody>${rows}</tbody></table></div>`
  }
  ${d.older ? html`<p><a href="/admin/audit?${d.older}" rel="next">Older events</a></p>` : null}
</section>`,
  );
}
