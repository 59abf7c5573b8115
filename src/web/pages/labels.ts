import { maxlengthFor } from '../../core/code-points.js';
import { MAX_LABEL_CHARS } from '../../core/label-name.js';
import { plural } from '../format.js';
import { html } from '../html.js';
import { listPager } from './list-pager.js';
import { confirmPage } from './confirm.js';
import { crumbs, layout } from './layout.js';
import { projectTabs } from './project-tabs.js';
import { forRow } from './row-action.js';

/** A label of the project's vocabulary as its Labels tab shows it. */
export interface LabelRow {
  id: string;
  name: string;
  color: string;
  /** Documents carrying it (not those in the trash). */
  documents: number;
}

export interface LabelsPageData {
  user: { email: string };
  csrfToken: string;
  project: { id: string; name: string; isDefault: boolean };
  /** The viewer's role: viewers see the labels, editors and owners change them. */
  role: 'viewer' | 'editor' | 'owner';
  /** This page of the vocabulary (by name), or of the labels `match` found; the others through `next` and `first`. */
  labels: LabelRow[];
  /** What the Find field looked for ('' or absent: every label): the links and forms keep it. */
  match?: string;
  /** This page's cursor (none on the first): the forms send it, to come back to this page. */
  cursor?: string;
  /** Link to the next page, or null on the last. */
  next?: string | null;
  /** Link to the first page when this is a later one. */
  first?: string | null;
  colors: readonly string[];
  error?: string;
  /** The add form as it was sent back with what was wrong. */
  form?: { name: string; color: string };
  /** A label's row form as it was sent back refused: the name typed stays in its field. */
  editing?: { id: string; name: string };
}

const colorSelect = (colors: readonly string[], selected: string, label?: string) =>
  html`<select name="color"${label ? html` aria-label="${label}"` : null}>${colors.map((c) => html`<option value="${c}"${c === selected ? html` selected` : null}>${c}</option>`)}</select>`;

/** The page a form is sent from (the labels found, which page of them), so that it comes back to it. */
const pageField = (d: { match?: string | undefined; cursor?: string | undefined }) => [
  d.match ? html`<input type="hidden" name="q" value="${d.match}">` : null,
  d.cursor ? html`<input type="hidden" name="cursor" value="${d.cursor}">` : null,
];

/** The same place as an address's query. */
const placeQuery = (d: { match?: string | undefined; cursor?: string | undefined }) => {
  const q = new URLSearchParams({ ...(d.match ? { q: d.match } : {}), ...(d.cursor ? { cursor: d.cursor } : {}) }).toString();
  return q ? `?${q}` : '';
};

function row(d: LabelsPageData, l: LabelRow) {
  const p = d.project;
  const listed = `/documents?project_id=${p.id}&labels=${encodeURIComponent(l.name)}`;
  return html`<tr data-label-id="${l.id}">
  <td data-label="Label"><a href="${listed}" class="badge label-${l.color}" title="Documents labelled ${l.name}"><bdi>${l.name}</bdi></a></td>
  <td class="num" data-label="Documents"><a href="${listed}">${plural(l.documents, 'document')}<span class="visually-hidden"> labelled ${l.name}</span></a></td>
  ${
    d.role === 'viewer'
      ? null
      : html`<td class="actions-cell" data-label="Change"><div class="row-actions">
    <form method="post" action="/projects/${p.id}/labels/${l.id}" class="inline-field">
      <input type="hidden" name="_csrf" value="${d.csrfToken}">${pageField(d)}
      <input type="text" name="name" value="${d.editing?.id === l.id ? d.editing.name : l.name}" maxlength="${maxlengthFor(MAX_LABEL_CHARS)}" required size="14" aria-label="New name for ${l.name}">
      ${colorSelect(d.colors, l.color, `Colour of ${l.name}`)}
      <button type="submit" class="small">${forRow('Save', l.name)}</button>
    </form>
    <a href="/projects/${p.id}/labels/${l.id}/delete${placeQuery(d)}" class="button danger small">${forRow('Delete…', l.name)}</a>
  </div></td>`
  }
</tr>`;
}

/** A project's Labels tab: its vocabulary with counts; editors add, rename, recolour and delete labels. */
export function labelsPage(d: LabelsPageData) {
  const p = d.project;
  const edits = d.role !== 'viewer';
  const f = d.form ?? { name: '', color: d.colors[0] ?? 'gray' };
  return layout(
    { title: `${p.name}: labels`, user: d.user, csrfToken: d.csrfToken, active: 'projects', wide: true },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }])}
  <h1>${p.name}${p.isDefault ? html` <span class="badge">default</span>` : null}</h1>
  ${projectTabs(p.id, 'labels', d.role)}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <p class="muted">Labels sort this project's documents: search and the Documents list narrow by them. ${
    edits ? 'A document gets labels on its page, on the Documents list (several at once), or at upload; a new name joins the list here.' : 'Its editors add and change them.'
  }</p>
  <h2>Labels</h2>
  ${
    d.labels.length > 0 || d.first || d.match
      ? html`<form method="get" action="/projects/${p.id}/labels" class="row-form" role="search" aria-label="Find a label">
    <label class="grow">Find a label <input type="search" name="q" value="${d.match ?? ''}" maxlength="${maxlengthFor(MAX_LABEL_CHARS)}" placeholder="part of its name"></label>
    <button type="submit">Find</button>${d.match ? html` <a href="/projects/${p.id}/labels">All labels</a>` : null}
  </form>`
      : null
  }
  ${
    d.labels.length === 0 && !d.first
      ? html`<p class="empty" id="no-labels">${d.match ? html`No label's name holds “${d.match}”.` : 'No labels yet.'}</p>`
      : html`<div class="table-wrap"><table class="rows labels" id="labels">
    <thead><tr><th scope="col">Label</th><th scope="col" class="num">Documents</th>${edits ? html`<th scope="col">Rename or recolour</th>` : null}</tr></thead>
    <tbody>${d.labels.map((l) => row(d, l))}</tbody>
  </table></div>`
  }
  ${listPager(d.first, d.next, 'Pages of labels')}
  ${
    edits
      ? html`<h2 id="add-label">Add a label</h2>
  <form method="post" action="/projects/${p.id}/labels" class="row-form" aria-labelledby="add-label">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">${pageField(d)}
    <label class="grow">Name <input type="text" name="name" maxlength="${maxlengthFor(MAX_LABEL_CHARS)}" required value="${f.name}" aria-describedby="label-name-hint"><span class="hint" id="label-name-hint">Up to ${MAX_LABEL_CHARS} characters, no commas: for example “unpaid” or “2026 audit”.</span></label>
    <label>Colour ${colorSelect(d.colors, f.color)}</label>
    <button type="submit" class="primary">Add label</button>
  </form>`
      : null
  }
</section>`,
  );
}

/** Deleting a label asks first: it comes off every document that carries it. */
export function labelDeletePage(d: { user: { email: string }; csrfToken: string; projectId: string; label: LabelRow; place: { match: string; cursor?: string | undefined }; back: string }) {
  const l = d.label;
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'projects',
    title: `Delete the label “${l.name}”?`,
    body: html`<p>${l.documents === 0 ? 'No document carries it.' : html`It comes off the ${plural(l.documents, 'document')} that ${l.documents === 1 ? 'carries' : 'carry'} it; the documents themselves stay.`} Search and the Documents list can no longer narrow by it.</p>`,
    action: `/projects/${d.projectId}/labels/${l.id}/delete`,
    // Back to the page of the tab it was asked from, deleted or not.
    fields: { ...(d.place.match ? { q: d.place.match } : {}), ...(d.place.cursor ? { cursor: d.place.cursor } : {}) },
    confirm: 'Delete label',
    cancel: d.back,
  });
}
