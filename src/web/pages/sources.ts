import { maxlengthFor } from '../../core/code-points.js';
import { MAX_SOURCE_URL_CHARS } from '../../core/source-limits.js';
import { formatTime, plural } from '../format.js';
import { html } from '../html.js';
import { confirmPage } from './confirm.js';
import { crumbs, layout } from './layout.js';
import { projectTabs } from './project-tabs.js';
import type { ProjectRow } from './projects.js';
import { forRow } from './row-action.js';
import { kindFields, kindForm, schedulePicker, SOURCE_KIND_FORMS, type SourceKindForm } from './source-form.js';

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
  /** Its pass is due and has not started (waiting for a free pass, or for the scheduler to wake). */
  due: boolean;
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
  /** The user's role on the project (an owner's tabs include Sharing and Settings). */
  role?: 'editor' | 'owner';
  sources: SourceRow[];
  /** The kinds this server has (the form offers those it knows of, in its order). */
  kinds: readonly string[];
  /** What the server allows: the folders a folder source may be under, the shortest schedule. */
  policy: { roots: readonly string[]; minEveryMs: number };
  /** The kind chosen (`?kind=`): the form shows only its fields. */
  kind?: string;
  error?: string;
  /** The add form as it was sent (never a secret). */
  form?: { url: string; every: string; options: Record<string, unknown> };
}

const lastPass = (r: NonNullable<SourceRow['lastResult']>) =>
  `${plural(r.listed, 'item')}: ${r.added} added, ${r.changed} changed, ${r.deleted} deleted, ${r.unchanged} unchanged${r.failed ? `, ${r.failed} failed` : ''}`;

const button = (action: string, label: string, csrfToken: string, opts: { cls?: string; fields?: Record<string, string> } = {}) =>
  html`<form method="post" action="${action}" class="inline">
    <input type="hidden" name="_csrf" value="${csrfToken}">${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <button type="submit" class="${opts.cls ?? 'secondary small'}">${label}</button>
  </form>`;

/** One word a source's state is, in a badge (one state: a failed source is only "Failed", with why under it). */
const STATUS_LABEL: Record<SourceRow['status'], string> = { active: 'Up to date', syncing: 'Syncing', paused: 'Paused', error: 'Failed' };
const STATUS_BADGE: Record<SourceRow['status'], string> = { active: 'ok', syncing: 'accent', paused: 'warn', error: 'bad' };

export function sourceCard(projectId: string, s: SourceRow, csrfToken: string) {
  const base = `/projects/${projectId}/sources/${s.id}`;
  // A pass asked for (Sync now) or due by its schedule is not "Up to date" until it has run.
  const due = s.due && s.status === 'active';
  return html`<li class="source" data-source-id="${s.id}" data-status="${s.status}">
  <p><strong>${kindForm(s.kind)?.title ?? s.kind}</strong> <span class="path">${s.url}</span> · every ${s.every}
    <span class="badge ${STATUS_BADGE[s.status]} status-${s.status}">${due ? 'Pass due' : STATUS_LABEL[s.status]}</span></p>
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
  <p class="muted">${
    s.lastSync === null ? (s.error ? null : s.status === 'syncing' ? 'Its first pass is under way.' : 'No pass has finished yet.') : html`Last pass ${formatTime(s.lastSync)}${s.lastResult ? html`: ${lastPass(s.lastResult)}` : null}.`
  }
    ${due ? ' Its next pass is due: it starts as soon as the server can run it.' : s.nextSync !== null && s.status !== 'paused' ? html` ${s.error ? 'Next try' : 'Next'} ${formatTime(s.nextSync)}.` : null}
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

/** The kind choice, then the chosen kind's form: its URL with an example, its own fields, the schedule picker. */
function addSource(d: SourcesPageData) {
  const base = `/projects/${d.project.id}/sources`;
  const offered = SOURCE_KIND_FORMS.filter((k) => d.kinds.includes(k.kind));
  const chosen = d.kind ? offered.find((k) => k.kind === d.kind) : undefined;
  const foldersAllowed = d.policy.roots.length > 0;
  const example = (k: SourceKindForm) => (k.kind === 'folder' && foldersAllowed ? `file://${d.policy.roots[0]!.replace(/\/$/, '')}/docs` : k.example);
  const f = d.form ?? { url: '', every: DEFAULT_SCHEDULE, options: {} };
  return html`<h2 id="add-source">Add a source</h2>
  <p id="kind-question">What does it read?</p>
  <ul class="kind-choices" aria-labelledby="kind-question">${offered.map((k) =>
    k.kind === 'folder' && !foldersAllowed
      ? html`<li class="kind-choice unavailable"><strong>${k.title}</strong><span class="hint">Not on this server: its operator allows folders with --source-roots.</span></li>`
      : html`<li class="kind-choice${k === chosen ? ' current' : ''}"><a href="${base}?kind=${k.kind}#add-source"${k === chosen ? html` aria-current="true"` : null}><strong>${k.title}</strong><span class="hint">${k.about}</span></a></li>`,
  )}</ul>
  ${
    chosen
      ? html`<form method="post" action="${base}" class="stack" aria-labelledby="add-heading" id="add-form">
    <h3 id="add-heading">${chosen.title}</h3>
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="kind" value="${chosen.kind}">
    <label>URL <input type="text" name="url" required maxlength="${maxlengthFor(MAX_SOURCE_URL_CHARS)}" value="${f.url}" spellcheck="false" autocomplete="off" aria-describedby="url-hint">
      <span class="hint" id="url-hint">e.g. <code class="url">${example(chosen)}</code>${
        chosen.kind === 'folder' ? html` (under ${d.policy.roots.join(', ')})` : null
      }</span></label>
    ${kindFields(chosen, f.options, null)}
    ${schedulePicker(f.every, d.policy.minEveryMs)}
    <p class="actions"><button type="submit" class="primary">Add source</button> <a href="${base}" class="button">Cancel</a></p>
  </form>`
      : null
  }`;
}

/** The schedule a new source starts with. */
const DEFAULT_SCHEDULE = '1h';

export function sourcesPage(d: SourcesPageData) {
  const p = d.project;
  return layout(
    { title: `${p.name}: sources`, user: d.user, csrfToken: d.csrfToken, active: 'projects', wide: true },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }])}
  <h1>${p.name}${p.isDefault ? html` <span class="badge">default</span>` : null}</h1>
  ${projectTabs(p.id, 'sources', d.role ?? 'owner')}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <p class="muted">Sources keep this project current: each is looked at on its schedule, new and changed items are indexed, and deleted ones removed.
    A pass that would remove many documents at once holds those removals until you confirm (it names them), and goes on adding and changing files meanwhile.</p>
  <h2>Sources</h2>
  ${d.sources.length === 0 ? html`<p class="muted" id="no-sources">No sources yet.</p>` : html`<ul class="sources" id="sources">${d.sources.map((s) => sourceCard(p.id, s, d.csrfToken))}</ul>`}
  ${addSource(d)}
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
    body: html`<p>The source stops keeping this project current. ${
      d.documents === 1
        ? 'It made 1 document: that is deleted with it and leaves search at once, unless you keep it, as if it had been uploaded.'
        : `It made ${plural(d.documents, 'document')}: they are deleted with it and leave search at once, unless you keep them, as if they had been uploaded.`
    }</p>
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
  source: { id: string; kind: string; url: string; every: string; options: Record<string, unknown> };
  /** The secret options set. */
  secretsSet: readonly string[];
  minEveryMs: number;
  error?: string;
}

/** Editing a source: the same fields as adding one of its kind (its URL and kind stay). Its documents stay. */
export function sourceEditPage(d: SourceEditData) {
  const s = d.source;
  const base = `/projects/${d.project.id}/sources`;
  const k = kindForm(s.kind) ?? { kind: s.kind, title: s.kind, about: '', example: '', fields: [], globs: true };
  return layout(
    { title: `Edit ${s.url}`, user: d.user, csrfToken: d.csrfToken, active: 'projects' },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }, { href: `/projects/${d.project.id}`, label: d.project.name }, { href: base, label: 'Sources' }])}
  <h1>Edit the source</h1>
  <p><strong>${k.title}</strong> <span class="path">${s.url}</span></p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="${base}/${s.id}/edit" class="stack" id="edit-source">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${kindFields(k, s.options, d.secretsSet)}
    ${schedulePicker(s.every, d.minEveryMs)}
    <p class="actions"><button type="submit" class="primary">Save</button> <a href="${base}" class="button">Cancel</a></p>
  </form>
  <p class="muted">Its documents stay: new credentials or a new schedule take effect at the next pass, which starts at once.</p>
</section>`,
  );
}
