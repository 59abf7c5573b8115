import { formatTime, plural } from '../format.js';
import { html } from '../html.js';
import { confirmPage } from './confirm.js';
import { crumbs, layout } from './layout.js';
import { projectTabs } from './project-tabs.js';
import type { ProjectRow } from './projects.js';
import { forRow } from './row-action.js';

/** A source as its project's Sources tab shows it. */
export interface SourceRow {
  id: string;
  kind: string;
  url: string;
  every: string;
  status: 'active' | 'syncing' | 'paused' | 'error';
  pausedReason: string | null;
  error: string | null;
  lastSync: number | null;
  nextSync: number | null;
  lastResult: { listed: number; added: number; changed: number; deleted: number; unchanged: number; failed: number } | null;
  /** Names of the secret options set (never their values). */
  secrets: string[];
  itemErrors: { count: number; items: { path: string; error: string }[] };
  /** Secret options to enter again (sealed under another secrets key). */
  reenter: string[];
  /** Deletions the guard holds for confirmation, and which documents (the first of them). */
  held: { count: number; items: { path: string; documentId: string; filename: string | null }[] } | null;
}

/** Held documents a source card names; the rest are counted (all of them: the API, `docsearch sources show`). */
const HELD_SHOWN = 50;

export interface SourcesPageData {
  user: { email: string };
  csrfToken: string;
  project: Pick<ProjectRow, 'id' | 'name' | 'isDefault'>;
  sources: SourceRow[];
  kinds: readonly string[];
  error?: string;
  form?: { kind: string; url: string; every: string; username: string };
}

const lastPass = (r: NonNullable<SourceRow['lastResult']>) =>
  `${plural(r.listed, 'item')}: ${r.added} added, ${r.changed} changed, ${r.deleted} deleted, ${r.unchanged} unchanged${r.failed ? `, ${r.failed} failed` : ''}`;

const button = (action: string, label: string, csrfToken: string, opts: { cls?: string; fields?: Record<string, string> } = {}) =>
  html`<form method="post" action="${action}" class="inline">
    <input type="hidden" name="_csrf" value="${csrfToken}">${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <button type="submit" class="${opts.cls ?? 'secondary small'}">${label}</button>
  </form>`;

export function sourceCard(projectId: string, s: SourceRow, csrfToken: string) {
  const base = `/projects/${projectId}/sources/${s.id}`;
  return html`<li class="source" data-source-id="${s.id}" data-status="${s.status}">
  <p><strong>${s.kind}</strong> <span class="path">${s.url}</span> · every ${s.every}
    <span class="status status-${s.status}">${s.status}</span></p>
  ${s.status === 'paused' ? html`<p class="error" role="status">Paused: ${s.pausedReason ?? 'by its owner'}</p>` : null}
  ${
    s.held
      ? html`<details class="held" open><summary>${plural(s.held.count, 'document')} would be removed</summary><ul>${s.held.items
          .slice(0, HELD_SHOWN)
          .map((i) => html`<li><a href="/documents/${i.documentId}" class="path">${i.path}</a></li>`)}</ul>${
          s.held.count > HELD_SHOWN ? html`<p class="muted">and ${plural(s.held.count - HELD_SHOWN, 'more')}: <code>docsearch sources show ${s.id}</code> lists them all.</p>` : null
        }</details>`
      : null
  }
  ${s.error ? html`<p class="error" role="status">The last pass failed: ${s.error}</p>` : null}
  ${s.reenter.length ? html`<p class="error" role="status">Enter again: ${s.reenter.join(', ')} (<a href="/projects/${projectId}/sources/${s.id}/edit">Edit</a>). The credentials were sealed under another secrets key.</p>` : null}
  <p class="muted">${s.lastSync === null ? 'No pass has finished yet.' : html`Last pass ${formatTime(s.lastSync)}${s.lastResult ? html`: ${lastPass(s.lastResult)}` : null}.`}
    ${s.nextSync !== null && s.status !== 'paused' ? html` Next ${formatTime(s.nextSync)}.` : null}
    ${s.secrets.length ? html` Credentials set: ${s.secrets.join(', ')}.` : null}</p>
  ${
    s.itemErrors.count > 0
      ? html`<details><summary>${plural(s.itemErrors.count, 'item')} could not be read</summary><ul>${s.itemErrors.items.map((i) => html`<li><span class="path">${i.path}</span>: ${i.error}</li>`)}</ul></details>`
      : null
  }
  <p class="actions">
    ${s.held ? button(`${base}/resume`, s.held.count === 1 ? 'Remove it' : `Remove these ${s.held.count}`, csrfToken, { cls: 'danger small' }) : null}
    ${s.status === 'paused' && !s.held ? button(`${base}/resume`, 'Resume and confirm', csrfToken, { cls: 'small' }) : button(`${base}/sync`, 'Sync now', csrfToken)}
    ${s.status === 'paused' && !s.held ? null : button(`${base}/pause`, 'Pause', csrfToken)}
    <a href="${base}/edit" class="button small">${forRow('Edit', s.url)}</a>
    <a href="${base}/remove" class="button danger small">${forRow('Remove…', s.url)}</a>
  </p>
</li>`;
}

export function sourcesPage(d: SourcesPageData) {
  const p = d.project;
  const f = d.form ?? { kind: '', url: '', every: '1h', username: '' };
  return layout(
    { title: `${p.name}: sources`, user: d.user, csrfToken: d.csrfToken, active: 'projects', wide: true },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }])}
  <h1>${p.name}${p.isDefault ? html` <span class="badge">default</span>` : null}</h1>
  ${projectTabs(p.id, 'sources')}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <p class="muted">Sources keep this project current: each is looked at on its schedule, new and changed items are indexed, and deleted ones removed.
    A pass that would remove many documents at once holds those removals until you confirm (it names them), and goes on adding and changing files meanwhile.</p>
  <h2>Sources</h2>
  ${d.sources.length === 0 ? html`<p class="muted" id="no-sources">No sources yet.</p>` : html`<ul class="sources" id="sources">${d.sources.map((s) => sourceCard(p.id, s, d.csrfToken))}</ul>`}
  <h2 id="add-source">Add a source</h2>
  <form method="post" action="/projects/${p.id}/sources" class="stack" aria-labelledby="add-source">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>URL <input type="text" name="url" required maxlength="2000" value="${f.url}" placeholder="file:///srv/docs, https://cloud.example.com/remote.php/dav/files/me/Docs/, s3://bucket/prefix, imaps://mail.example.com/INBOX"></label>
    <label>Kind <select name="kind"><option value="">from the URL</option>${d.kinds.map((k) => html`<option value="${k}"${f.kind === k ? html` selected` : null}>${k}</option>`)}</select></label>
    <label>Every <input type="text" name="every" maxlength="20" value="${f.every}" placeholder="15m, 1h, 1d"></label>
    <label>User name <input type="text" name="username" maxlength="500" value="${f.username}" autocomplete="off"></label>
    <label>Password <input type="password" name="password" maxlength="4000" autocomplete="new-password"></label>
    <button type="submit" class="primary">Add source</button>
  </form>
</section>`,
  );
}

/** Removing a source asks first, and whether its documents go with it. */
export function sourceRemovePage(d: { user: { email: string }; csrfToken: string; projectId: string; source: Pick<SourceRow, 'id' | 'url'>; documents: number }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'projects',
    title: `Remove the source ${d.source.url}?`,
    body: html`<p>The source stops keeping this project current. It made ${plural(d.documents, 'document')}: they are deleted with it and leave
    search at once, unless you keep them, as if they had been uploaded.</p>
    <p><label><input type="checkbox" name="keep_documents" value="true" form="remove-source"> Keep its documents</label></p>`,
    action: `/projects/${d.projectId}/sources/${d.source.id}/remove`,
    formId: 'remove-source',
    confirm: 'Remove the source',
    cancel: `/projects/${d.projectId}/sources`,
  });
}

/** What the edit form shows of a source: never a secret's value, only that it is set. */
export interface SourceEditData {
  user: { email: string };
  csrfToken: string;
  project: Pick<ProjectRow, 'id' | 'name'>;
  source: { id: string; kind: string; url: string; every: string; include: string[]; exclude: string[]; username: string | null };
  /** The kind takes a user name (basic authentication). */
  takesUsername: boolean;
  /** The kind's secret options, and which of them are set. */
  secretOptions: readonly string[];
  secretsSet: readonly string[];
  error?: string;
}

/** Editing a source: its schedule, which paths it indexes, its credentials (blank keeps them). Its documents stay. */
export function sourceEditPage(d: SourceEditData) {
  const s = d.source;
  const base = `/projects/${d.project.id}/sources`;
  return layout(
    { title: `Edit ${s.url}`, user: d.user, csrfToken: d.csrfToken, active: 'projects' },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }, { href: `/projects/${d.project.id}`, label: d.project.name }, { href: base, label: 'Sources' }])}
  <h1>Edit the ${s.kind} source</h1>
  <p class="path">${s.url}</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="${base}/${s.id}/edit" class="stack" id="edit-source">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Every <input type="text" name="every" maxlength="20" value="${s.every}" required aria-describedby="every-hint"></label>
    <span class="hint" id="every-hint">How often it looks for changes: 15m, 1h, 1d.</span>
    <label>Index only <textarea name="include" rows="3" maxlength="20000" aria-describedby="include-hint">${s.include.join('\n')}</textarea></label>
    <span class="hint" id="include-hint">One glob a line, e.g. **/*.md or docs/**; empty: every file.</span>
    <label>Leave out <textarea name="exclude" rows="3" maxlength="20000" aria-describedby="exclude-hint">${s.exclude.join('\n')}</textarea></label>
    <span class="hint" id="exclude-hint">One glob a line. Documents of paths left out are removed at the next pass (the deletion guard still applies).</span>
    ${d.takesUsername ? html`<label>User name <input type="text" name="username" maxlength="500" value="${s.username ?? ''}" autocomplete="off"></label>` : null}
    ${d.secretOptions.map(
      (name) => html`<label>${name.replaceAll('_', ' ')} <input type="password" name="secret_${name}" maxlength="4000" autocomplete="new-password" aria-describedby="secret-${name}-hint"></label>
    <span class="hint" id="secret-${name}-hint">${d.secretsSet.includes(name) ? 'Set, and never shown: leave it empty to keep it, or type a new one.' : 'Not set.'}</span>`,
    )}
    <p class="actions"><button type="submit" class="primary">Save</button> <a href="${base}" class="button">Cancel</a></p>
  </form>
  <p class="muted">Its documents stay: new credentials or a new schedule take effect at the next pass, which starts at once.</p>
</section>`,
  );
}
