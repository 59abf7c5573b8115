import { formatTime, plural } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';

export interface AdminSourceRow {
  id: string;
  projectId: string;
  projectName: string;
  ownerEmail: string | null;
  kind: string;
  url: string;
  every: string;
  status: 'active' | 'syncing' | 'paused' | 'error';
  /** Why it is paused, or why its last pass failed. */
  why: string | null;
  held: number;
  failures: number;
  lastSync: number | null;
}

/**
 * Admin → Sources: every source of the library and its state — which need someone — but never what they hold:
 * the documents stay their projects' (an admin who is no member of a project reads none of them).
 */
export function adminSourcesPage(d: { user: { email: string; isAdmin?: boolean }; csrfToken: string; sources: AdminSourceRow[] }) {
  const attention = d.sources.filter((s) => s.status === 'paused' || s.status === 'error').length;
  const rows = d.sources.map(
    (s) => html`<tr data-source-id="${s.id}">
  <td>${s.projectName}${s.ownerEmail ? html`<br><span class="muted">${s.ownerEmail}</span>` : null}</td>
  <td data-label="Source"><strong>${s.kind}</strong> <span class="path">${s.url}</span><br><span class="muted">every ${s.every}</span></td>
  <td data-label="State"><span class="status status-${s.status}">${s.status}</span>${s.why ? html`<br><span class="muted">${s.why}</span>` : null}${
    s.held > 0 ? html`<br>${plural(s.held, 'document')} held` : null
  }${s.failures > 1 ? html`<br>${s.failures} failed passes in a row` : null}</td>
  <td data-label="Last pass">${s.lastSync === null ? html`<span class="muted">none yet</span>` : html`<time datetime="${new Date(s.lastSync).toISOString()}">${formatTime(s.lastSync)}</time>`}</td>
</tr>`,
  );
  return layout(
    { title: 'Sources', user: d.user, csrfToken: d.csrfToken, active: 'admin-sources', wide: true },
    html`<section class="card">
  <h1>Sources</h1>
  <p class="muted">Every source of this docsearch and its state${attention ? html`: <strong>${plural(attention, 'source')} ${attention === 1 ? 'needs' : 'need'} someone</strong>` : ''}. Their owners and editors are told; what the sources hold stays in their projects.</p>
  ${
    d.sources.length === 0
      ? html`<p class="empty" id="no-sources">No project has a source yet.</p>`
      : html`<div class="table-wrap"><table class="rows" id="admin-sources"><thead><tr><th>Project</th><th>Source</th><th>State</th><th>Last pass</th></tr></thead><tbody>${rows}</tbody></table></div>`
  }
</section>`,
  );
}
