import { maxlengthFor } from '../../core/code-points.js';
import { MAX_LABEL_LIST_CHARS } from '../../core/label-name.js';
import { MAX_FILENAME_CHARS } from '../../core/name-limits.js';
import { foldAscii } from '../../core/name-order.js';
import { filterTypeName, formatBytes, formatTime, typeName } from '../format.js';
import { html } from '../html.js';
import { listPager } from './list-pager.js';
import { layout } from './layout.js';
import { type DocumentRow, documentsTable, liveStatus, pathLine, uploadForm } from './project.js';
import { forRow } from './row-action.js';

/** The Documents page's filters, as the form and its links carry them (names of GET /api/v1/documents where they match). */
export interface DocumentsFilter {
  project_id: string;
  type: string;
  status: string;
  filename: string;
  /** Label names, comma-separated: documents with all of them. */
  labels: string;
  /** Dates (YYYY-MM-DD), both days included. */
  from: string;
  to: string;
  sort: string;
}

export interface DocumentsPageData {
  user: { email: string };
  csrfToken: string;
  filter: DocumentsFilter;
  projects: { id: string; name: string }[];
  /** The projects the user edits: where selected documents may be moved. */
  moveTargets: { id: string; name: string }[];
  documents: DocumentRow[];
  /** Each listed document's labels (by document id), with their colours; a label links to the list filtered by it. */
  labels?: Map<string, { name: string; color: string }[]>;
  /** Link to the next page (the same filters and a cursor), or null on the last page. */
  next: string | null;
  /** Link to the first page when this is a later one. */
  first: string | null;
  /** Documents still queued or processing, in the whole library. */
  indexing: number;
  /** This page's own address (forms come back here). */
  self: string;
  /** Where the empty library's upload area puts files: the default project. */
  upload: { projectId: string; projectName: string; limits: { maxFileMb: number; maxFiles: number } };
  error?: string;
  /** A refused label change: the documents that were selected and the labels as typed, kept in the form. */
  bulk?: { ids: readonly string[]; labels: string };
}

/** Enter in the bulk "Labels to add or remove" field submits the form's first button: this one, which labels, not "Delete selected…". */
const ENTER_LABELS = html`<button type="submit" name="action" value="label" hidden></button>`;

/** The Type filter's choices: filter names, written as the pages write types (format.ts). */
const TYPES: [string, string][] = ['pdf', 'docx', 'txt', 'md', 'html', 'pptx', 'xlsx', 'odt', 'odp', 'ods', 'csv', 'tsv', 'rtf', 'epub', 'eml', 'png', 'jpeg', 'tiff', 'webp', 'doc', 'xls', 'ppt'].map((name) => [
  name,
  filterTypeName(name),
]);
const STATUSES = ['queued', 'processing', 'ready', 'failed'];
const SORTS: [string, string][] = [
  ['-uploaded', 'Newest first'],
  ['uploaded', 'Oldest first'],
  ['name', 'Name A–Z'],
  ['-name', 'Name Z–A'],
  ['-size', 'Largest first'],
  ['size', 'Smallest first'],
];

const option = (value: string, label: string, current: string) => html`<option value="${value}"${value === current ? html` selected` : null}>${label}</option>`;

/**
 * The list as it is filtered and sorted, narrowed by one more label (added to the labels asked, as the search page's
 * label facet adds; one asked already, in any case of A–Z, is not asked twice), from its first page.
 */
function withLabelHref(f: DocumentsFilter, name: string): string {
  const asked = f.labels.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const labels = asked.some((n) => foldAscii(n) === foldAscii(name)) ? asked : [...asked, name];
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, labels: labels.join(', ') })) if (v && !(k === 'sort' && v === '-uploaded')) params.set(k, v);
  return `/documents?${params.toString()}`;
}

function labelChips(f: DocumentsFilter, labels: { name: string; color: string }[] | undefined) {
  if (!labels?.length) return null;
  return html`<span class="doc-labels">${labels.map((l) => html` <a href="${withLabelHref(f, l.name)}" class="badge label-${l.color}" title="Documents labelled ${l.name}"><bdi>${l.name}</bdi></a>`)}</span>`;
}

/**
 * A document's row. Retry sits inside the bulk form (forms can't nest): the button posts that form, with its token,
 * to this document's retry; it shows when the document fails (app.js follows the status).
 */
function row(doc: DocumentsPageData['documents'][number], f: DocumentsFilter, projects: Map<string, string>, editable: ReadonlySet<string>, labels: { name: string; color: string }[] | undefined, picked: boolean) {
  // Only documents the person may change can be picked for the bulk actions (a viewer's are read-only).
  return html`<tr data-document-id="${doc.id}" data-status="${doc.status}">
  <td class="pick">${editable.has(doc.projectId) ? html`<input type="checkbox" name="ids" value="${doc.id}" aria-label="Select ${doc.filename}"${picked ? html` checked` : null}>` : null}</td>
  <td class="name-cell"><a href="/documents/${doc.id}" class="filename">${doc.filename}</a>${labelChips(f, labels)}${pathLine(doc.path)}</td>
  <td data-label="Project"><a href="/projects/${doc.projectId}" class="project-name">${projects.get(doc.projectId) ?? ''}</a></td>
  <td data-label="Type">${typeName(doc.contentType)}</td>
  <td class="num" data-label="Size">${formatBytes(doc.sizeBytes)}</td>
  <td class="status-cell" data-label="Status">${liveStatus(doc)} <button type="submit" formaction="/documents/${doc.id}/retry" class="small" data-shown-when="failed"${doc.status === 'failed' ? null : html` hidden`}>${forRow('Retry', doc.filename)}</button></td>
  <td data-label="Uploaded">${formatTime(doc.createdAt)}</td>
</tr>`;
}

/** The empty library: the upload area for the default project, and the list the uploads appear in. */
function emptyLibrary(d: DocumentsPageData) {
  const u = d.upload;
  return html`<p id="no-documents">Your library is empty. Upload documents (PDF, Word, OpenDocument, slides, spreadsheets, e-books, e-mail, images, text) here: they go into your
    <a href="/projects/${u.projectId}" class="project-name">${u.projectName}</a> project, and search finds them once they are indexed.
    More projects can be made under <a href="/projects">Projects</a>.</p>
  <h2 id="upload-heading" data-after-first="Upload more documents">Upload your first documents</h2>
  ${uploadForm(u.projectId, u.limits, d.csrfToken)}
  ${documentsTable(u.projectId, [], d.csrfToken, 'owner')}`;
}

/**
 * The whole library: every document of every project, filtered, sorted and paged (keyset cursor, so past any
 * number of documents). Choose documents to delete (after a confirmation) or move them; retry failed ones.
 * Works without JavaScript; app.js adds "select all".
 */
export function documentsPage(d: DocumentsPageData) {
  const f = d.filter;
  const names = new Map(d.projects.map((p) => [p.id, p.name]));
  const editable = new Set(d.moveTargets.map((p) => p.id));
  // The actions only where a row of this page can be picked: a page of documents the person only views offers none.
  const pickable = d.documents.some((doc) => editable.has(doc.projectId));
  const filtered = f.project_id || f.type || f.status || f.filename || f.labels || f.from || f.to;
  // A new account's first page: nothing to filter yet, so it leads to the upload instead.
  const empty = d.documents.length === 0 && !filtered && !d.first;
  return layout(
    { title: 'Documents', user: d.user, csrfToken: d.csrfToken, active: 'documents', wide: true, ...(empty ? { script: 'project.js' as const } : {}) },
    html`<section class="card">
  <h1>Documents</h1>
  <p class="muted">Every document in your library (deleted ones wait in the <a href="/trash" class="trash-link">Trash</a>).${d.indexing > 0 ? html` <span class="indexing" role="status">Still indexing ${d.indexing} document${d.indexing === 1 ? '' : 's'}: search finds ${d.indexing === 1 ? 'it once it is' : 'them once they are'} ready.</span>` : null}</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${empty ? emptyLibrary(d) : html`<details class="upload-more">
    <summary id="upload-heading">Upload documents into <span class="project-name">${d.upload.projectName}</span></summary>
    ${uploadForm(d.upload.projectId, d.upload.limits, d.csrfToken)}
    <p class="muted">Into another project: open it under <a href="/projects">Projects</a>.</p>
  </details>
  <details class="fold" data-fold-narrow open>
  <summary>Filter and sort${filtered ? ' (filtered)' : ''}</summary>
  <form method="get" action="/documents" class="filters" aria-label="Filter documents">
    <label>Name contains <input type="text" name="filename" value="${f.filename}" maxlength="${maxlengthFor(MAX_FILENAME_CHARS)}"></label>
    <label>Project <select name="project_id">${option('', 'All projects', f.project_id)}${d.projects.map((p) => option(p.id, p.name, f.project_id))}</select></label>
    <label>Type <select name="type">${option('', 'Any type', f.type)}${TYPES.map(([v, l]) => option(v, l, f.type))}</select></label>
    <label>Status <select name="status">${option('', 'Any status', f.status)}${STATUSES.map((v) => option(v, v, f.status))}</select></label>
    <label>With labels <input type="text" name="labels" value="${f.labels}" maxlength="${maxlengthFor(MAX_LABEL_LIST_CHARS)}" placeholder="unpaid, urgent"></label>
    <label>Uploaded from <input type="date" name="from" value="${f.from}"></label>
    <label>to <input type="date" name="to" value="${f.to}"></label>
    <label>Sort <select name="sort">${SORTS.map(([v, l]) => option(v, l, f.sort))}</select></label>
    <div class="filter-actions"><button type="submit">Show</button>${filtered ? html` <a href="/documents">Clear filters</a>` : null}</div>
  </form>
  </details>`}
  ${
    empty
      ? null
      : d.documents.length === 0
      ? html`<p class="muted" id="no-documents">No documents match these filters.</p>`
      : html`<form method="post" action="/documents/bulk" id="bulk" class="bulk">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.self}">
    ${pickable ? html`<details class="fold" data-fold-narrow open>
    <summary>With the selected documents: delete, move, retry, label</summary>
    <div class="bulk-actions" role="group" aria-label="With the selected documents">
      ${ENTER_LABELS}
      <button type="submit" name="action" value="delete" class="danger">Delete selected…</button>
      <label class="inline-label">Move selected to <select name="project_id">${d.moveTargets.map((p) => html`<option value="${p.id}">${p.name}</option>`)}</select></label>
      <button type="submit" name="action" value="move" class="secondary">Move</button>
      <button type="submit" name="action" value="retry" class="secondary" title="Queues the selected documents that failed again">Retry selected</button>
      <label class="inline-label">Labels to add or remove <input type="text" name="labels" maxlength="${maxlengthFor(MAX_LABEL_LIST_CHARS)}" placeholder="unpaid, urgent" value="${d.bulk?.labels ?? ''}"></label>
      <button type="submit" name="action" value="label" class="secondary">Add labels</button>
      <button type="submit" name="action" value="unlabel" class="secondary">Remove labels</button>
    </div>
    </details>
    <label class="check" hidden><input type="checkbox" id="select-all"> Select all on this page</label>` : null}
    <div class="scroll"><table class="documents rows" id="documents">
      <thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col" class="col-name">Name</th><th scope="col">Project</th><th scope="col">Type</th><th scope="col" class="num">Size</th><th scope="col" class="col-status">Status</th><th scope="col">Uploaded</th></tr></thead>
      <tbody>${d.documents.map((doc) => row(doc, f, names, editable, d.labels?.get(doc.id), d.bulk?.ids.includes(doc.id) ?? false))}</tbody>
    </table></div>
  </form>`
  }
  ${listPager(d.first, d.next)}
</section>`,
  );
}
