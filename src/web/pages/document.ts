import { maxlengthFor } from '../../core/code-points.js';
import { MAX_LABEL_LIST_CHARS } from '../../core/label-name.js';
import { MAX_FILENAME_CHARS } from '../../core/name-limits.js';
import { type CitationUnit, citationLabel, unitCount, unitHeading } from '../../core/citation-label.js';
import { formatBytes, formatTime, plural, typeName } from '../format.js';
import { withoutDirectionalControls } from '../display-text.js';
import { type Html, html } from '../html.js';
import { confirmPage } from './confirm.js';
import { contentLang } from './content-language.js';
import { crumbs, layout } from './layout.js';
import { type DocumentRow, liveStatus, retryForm } from './project.js';

/** Chunks starting on one page (page null: a format without pages), as GET /api/v1/documents/{id}/text gives them. */
export interface TextPage {
  page: number | null;
  chunks: { index: number; text: string; heading: string | null; page_start: number | null; page_end: number | null; ocr: boolean }[];
}

export interface DocumentPageData {
  user: { email: string };
  csrfToken: string;
  /**
   * `language`: the one its chunks are analysed in (set by its upload or project, else detected: "und" when none
   * could be told; null before it is ready); `ocrLanguages`: what its upload or project asked OCR to read in.
   */
  document: DocumentRow & { pages: number | null; warnings: string[]; sha256: string; language: { code: string; set: boolean } | null; ocrLanguages: string | null };
  project: { id: string; name: string };
  /** The viewer's role on its project: a viewer sees no rename, move, retry or delete. */
  role: 'viewer' | 'editor' | 'owner';
  /** Who uploaded it (null: an account since deleted). */
  uploadedBy: string | null;
  /** The projects the viewer edits, for Move. */
  projects: { id: string; name: string }[];
  /** What search sees, from `text.cursor` on (the first chunks when absent). */
  text: { pages: TextPage[]; next: string | null; continued: boolean };
  /** Whether it has a preview drawn page by page (a PDF, an image). */
  previewed: boolean;
  /** The page the preview shows (1 for a single page). */
  previewPage: number;
  /** What the text's page numbers count for this type (slides, rows, chapters, pages), or null: it has none. */
  unit: CitationUnit | null;
  /** What OCR read ("pages 1–2 (eng), mean confidence 96 %"), or null: no page was OCR'd. A low one is among the warnings too. */
  ocr: { text: string; low: boolean } | null;
  /** An e-mail's attachments (documents of their own) the viewer may read, and the e-mail an attachment came in. */
  attachments: { id: string; filename: string }[];
  attachedTo: { id: string; filename: string } | null;
  /** The passage a search result opened the page at (`?chunk=K&answer=S-E`): its chunk is marked, its answer found by app.js. */
  opened: { index: number; answer: string | null } | null;
  /** The labels it carries, with their colours (its project's vocabulary). */
  labels: { name: string; color: string }[];
  /** Its project's labels, each a box to tick (editors). */
  vocabulary?: { name: string; color: string }[];
  error?: string;
  /**
   * What the person sent in a form that was refused, shown again rather than the saved value: `labels` typed in the
   * new-labels field, `ticked` the label boxes ticked.
   */
  typed?: { filename?: string; labels?: string; ticked?: string[] };
}

const PDF = 'application/pdf';

function chunk(c: TextPage['chunks'][number], unit: CitationUnit, opened: DocumentPageData['opened'], lang: Html | null) {
  const where = c.page_start !== null && c.page_end !== null && c.page_end !== c.page_start ? citationLabel({ unit, start: c.page_start, end: c.page_end }) : null;
  const answer = opened?.index === c.index ? opened.answer : null;
  return html`<li class="chunk" id="chunk-${c.index}"${answer ? html` data-answer="${answer}"` : null}>
  <p class="chunk-meta muted">Chunk ${c.index + 1}${where ? html` · ${where}` : null}${c.heading ? html` · <bdi class="heading">${withoutDirectionalControls(c.heading)}</bdi>` : null}${
    c.ocr ? html` · <span class="badge ocr" title="Recognised by OCR from the page image">OCR</span>` : null
  }</p>
  <p class="chunk-text" dir="auto"${lang}>${withoutDirectionalControls(c.text)}</p>
</li>`;
}

/** The text by page, as search sees it, or why there is none yet. */
function textSection(d: DocumentPageData) {
  const doc = d.document;
  const empty =
    doc.status === 'failed'
      ? 'No text: processing failed (see the status above).'
      : doc.status !== 'ready'
        ? 'The text appears here once indexing finishes.'
        : 'No text was found in this document (a scan without OCR, or an empty file).';
  const t = d.text;
  const chunks = doc.chunkCount;
  // Folded by default: a long document's text would push everything else 30,000 pixels down. Open when paging through it.
  return html`<section aria-labelledby="text-heading" class="doc-text">
  <h2 id="text-heading">Text${t.continued ? html` <span class="muted">(continued)</span>` : null}</h2>
  <details id="text"${t.continued ? html` open` : null}>
  <summary>Show the text search sees${chunks > 0 ? ` (${chunks} chunk${chunks === 1 ? '' : 's'}${doc.pages ? `, ${unitCount(d.unit ?? 'page', doc.pages)}` : ''})` : ''}</summary>
  <p class="muted">The document’s chunks in order, by the ${d.unit === null || d.unit === 'page' ? 'page' : d.unit} each starts on.${
    d.ocr ? html` Text read from a page image by OCR is marked <span class="badge ocr">OCR</span>.` : null
  }</p>
  ${
    t.pages.length === 0
      ? html`<p class="muted" id="no-text">${empty}</p>`
      : t.pages.map(
          (p) => html`<section class="text-page"${p.page !== null ? html` data-page="${p.page}"` : null}>
  ${p.page !== null ? html`<h3>${unitHeading(d.unit ?? 'page', p.page)}</h3>` : null}
  <ol class="chunks">${p.chunks.map((c) => chunk(c, d.unit ?? 'page', d.opened, contentLang(doc.language?.code)))}</ol>
</section>`,
        )
  }
  ${t.next ? html`<p><a href="/documents/${doc.id}?text=${t.next}#text-heading" class="more">More text…</a></p>` : null}
  ${t.continued ? html`<p><a href="/documents/${doc.id}#text-heading" class="from-start">The text from the start</a></p>` : null}
  </details>
</section>`;
}

/**
 * A PDF's or a scan's preview, page by page: previous and next are links (`?page=N`), so it works without script;
 * app.js swaps the image in place instead. Both links are always there, hidden at either end, for the script to show.
 * The image opens it larger: a PDF in the browser's own viewer at that page (which zooms), an image in the viewer.
 */
function preview(d: DocumentPageData) {
  const doc = d.document;
  const n = d.previewPage;
  const pages = doc.pages ?? 1;
  const at = (p: number) => `/documents/${doc.id}?page=${Math.min(pages, Math.max(1, p))}#preview`;
  const larger = doc.contentType === PDF ? `/documents/${doc.id}/file#page=${n}` : `/documents/${doc.id}/view`;
  return html`<figure class="preview" id="preview" data-page="${n}" data-pages="${pages}" data-document-id="${doc.id}" data-filename="${doc.filename}">
    <a href="${larger}" class="enlarge" title="Open it larger"><img src="/documents/${doc.id}/thumbnail.webp${n === 1 ? '' : `?page=${n}`}" class="thumb" alt="Page ${n} of ${doc.filename}" width="160"></a>
    ${
      pages > 1
        ? html`<figcaption><nav class="preview-pager" aria-label="Preview pages">
      <a href="${at(n - 1)}" rel="prev" aria-label="Previous page"${n > 1 ? null : html` hidden`}>‹ Previous</a>
      <span id="preview-where" aria-live="polite">Page ${n} of ${pages}</span>
      <a href="${at(n + 1)}" rel="next" aria-label="Next page"${n < pages ? null : html` hidden`}>Next ›</a>
    </nav></figcaption>`
        : null
    }
  </figure>`;
}

export function documentPage(d: DocumentPageData) {
  const doc = d.document;
  const file = `/documents/${doc.id}/file`;
  const movable = doc.status === 'ready' || doc.status === 'failed';
  const others = d.projects.filter((p) => p.id !== d.project.id);
  const edits = d.role !== 'viewer';
  return layout(
    { title: doc.filename, user: d.user, csrfToken: d.csrfToken, active: 'document' },
    html`<section class="card">
  ${crumbs([{ href: '/documents', label: 'Documents' }, { href: `/projects/${d.project.id}`, label: d.project.name }])}
  <h1 class="filename">${doc.filename}</h1>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <div class="actions">
    <a href="/documents/${doc.id}/view" class="button primary view">View</a>
    <a href="${file}" download="${doc.filename}" class="button">Download</a>
    <a href="/search?project=${d.project.id}" class="button">Search this project</a>
    ${edits ? html`<a href="/documents/${doc.id}/delete" class="button danger">Delete this document…</a>` : null}
  </div>
  <div class="doc-head">
    ${d.previewed ? preview(d) : null}
    <dl class="facts">
      <dt>Project</dt><dd><a href="/projects/${d.project.id}">${d.project.name}</a></dd>
      ${doc.path ? html`<dt>Path</dt><dd class="path">${doc.path}</dd>` : null}
      ${d.attachedTo ? html`<dt>Attached to</dt><dd class="attached-to"><a href="/documents/${d.attachedTo.id}">${d.attachedTo.filename}</a></dd>` : null}
      ${
        d.attachments.length > 0
          ? html`<dt>Attachments</dt><dd><ul class="attachments">${d.attachments.map((a) => html`<li><a href="/documents/${a.id}">${a.filename}</a></li>`)}</ul></dd>`
          : null
      }
      <dt>Labels</dt><dd class="doc-labels" id="doc-labels">${
        d.labels.length === 0
          ? html`<span class="muted">none</span>`
          : d.labels.map((l) => html`<a href="/documents?labels=${encodeURIComponent(l.name)}" class="badge label-${l.color}" title="Documents labelled ${l.name}"><bdi>${l.name}</bdi></a> `)
      }</dd>
      <dt>Type</dt><dd>${typeName(doc.contentType)}</dd>
      <dt>Size</dt><dd>${formatBytes(doc.sizeBytes)}</dd>
      ${doc.pages !== null ? html`<dt>${d.unit === 'slide' ? 'Slides' : 'Pages'}</dt><dd>${doc.pages}</dd>` : null}
      ${d.ocr && !d.ocr.low ? html`<dt>OCR</dt><dd class="ocr-note">${d.ocr.text}</dd>` : null}
      ${doc.language ? html`<dt>Language</dt><dd class="language">${doc.language.code === 'und' ? 'not determined' : doc.language.code}${doc.language.set ? ' (set)' : ''}</dd>` : null}
      ${doc.ocrLanguages ? html`<dt>OCR languages</dt><dd class="ocr-languages">${doc.ocrLanguages}</dd>` : null}
      <dt>Chunks</dt><dd>${doc.chunkCount}</dd>
      <dt>Status</dt><dd>${liveStatus(doc)} ${edits ? html`<span data-shown-when="failed"${doc.status === 'failed' ? null : html` hidden`}>${retryForm(doc, d.csrfToken)}</span>` : null}</dd>
      <dt>Uploaded</dt><dd>${formatTime(doc.createdAt)}</dd>
      <dt>Uploaded by</dt><dd class="uploader">${d.uploadedBy ?? 'a deleted account'}</dd>
      <dt>SHA-256</dt><dd><code class="hash">${doc.sha256}</code></dd>
    </dl>
  </div>
  ${edits ? manageSection(d, others, movable) : null}
  ${doc.warnings.length > 0 ? html`<h2>Warnings</h2><ul class="warnings">${doc.warnings.map((w) => html`<li>${w}</li>`)}</ul>` : null}
  ${textSection(d)}
</section>`,
  );
}

/** Rename and move, for an editor or owner of its project. */
function manageSection(d: DocumentPageData, others: DocumentPageData['projects'], movable: boolean) {
  const doc = d.document;
  return html`<h2>Rename, label or move</h2>
  <div class="manage">
  <form method="post" action="/documents/${doc.id}/rename" class="row-form">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label class="grow">Name <input type="text" name="filename" maxlength="${maxlengthFor(MAX_FILENAME_CHARS)}" required value="${d.typed?.filename ?? doc.filename}"></label>
    <button type="submit" class="secondary">Rename</button>
  </form>
  ${labelsForm(d)}
  ${
    others.length === 0
      ? html`<p class="muted">To move it, first <a href="/projects">create another project</a>.</p>`
      : html`<form method="post" action="/documents/${doc.id}/move" class="row-form">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label class="grow">Move to project <select name="project_id">${others.map((p) => html`<option value="${p.id}">${p.name}</option>`)}</select></label>
    <button type="submit" class="secondary" data-enabled-when="settled"${movable ? null : html` disabled`}>Move</button>
  </form>
  <p class="muted" data-hidden-when="settled"${movable ? html` hidden` : null}>It can be moved once indexing finishes.</p>`
  }
  </div>`;
}

/** Past this many labels the document does not carry, the form folds them under a summary. */
export const FOLD_LABELS_PAST = 24;

/**
 * The labels form: each of the project's labels a box (those it carries first, ticked) and a field for new names. A
 * datalist on one field of names separated by commas completed only the first name; boxes offer every label, by
 * keyboard, mouse or touch, without script. The route sets exactly the ticked `label`s and the typed `labels`.
 */
function labelsForm(d: DocumentPageData) {
  const carried = new Set(d.labels.map((l) => l.name));
  const ticked = d.typed?.ticked ? new Set(d.typed.ticked) : carried;
  const others = (d.vocabulary ?? []).filter((l) => !carried.has(l.name));
  const chips = (labels: { name: string; color: string }[]) =>
    html`<ul class="chips doc-labels">${labels.map(
      (l) => html`<li><label class="check badge label-${l.color}"><input type="checkbox" name="label" value="${l.name}"${ticked.has(l.name) ? html` checked` : null}> <bdi>${l.name}</bdi></label></li>`,
    )}</ul>`;
  // A large vocabulary folds its other labels away, so that the form stays short (open when one of them was ticked).
  const folded = others.length > FOLD_LABELS_PAST;
  const any = d.labels.length + others.length > 0;
  return html`<form method="post" action="/documents/${d.document.id}/labels" id="labels">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <fieldset aria-describedby="labels-hint"><legend>Labels</legend>
    ${folded ? (d.labels.length > 0 ? chips(d.labels) : null) : any ? chips([...d.labels, ...others]) : null}
    ${folded ? html`<details class="more-labels"${others.some((l) => ticked.has(l.name)) ? html` open` : null}><summary>The project's ${others.length} other labels</summary>${chips(others)}</details>` : null}
    <div class="row-form">
      <label class="grow">New labels <input type="text" name="labels" maxlength="${maxlengthFor(MAX_LABEL_LIST_CHARS)}" value="${d.typed?.labels ?? ''}" aria-describedby="new-labels-hint"><span class="hint" id="new-labels-hint">Names separated by commas, for example “unpaid, urgent”; a name the project lacks joins its labels.</span></label>
      <button type="submit" class="secondary">Save labels</button>
    </div>
    <p class="hint" id="labels-hint">${any ? 'It carries the labels ticked and the new ones; nothing ticked or typed: no labels.' : 'The project has no labels yet; nothing typed: no labels.'}</p>
    </fieldset>
  </form>`;
}

/** Deleting one document, or several chosen on the Documents page: asks first, naming each. */
export function documentsDeletePage(d: {
  user: { email: string };
  csrfToken: string;
  documents: { id: string; filename: string; chunkCount: number }[];
  /** Where to go back (Cancel, and after deleting). */
  returnTo: string;
  /** Days the trash keeps them (0: deleting is final). */
  trashDays: number;
}) {
  const n = d.documents.length;
  const one = n === 1 ? d.documents[0]! : null;
  const chunks = d.documents.reduce((sum, doc) => sum + doc.chunkCount, 0);
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'document',
    title: one ? `Delete “${one.filename}”?` : `Delete ${n} documents?`,
    body: html`${one ? null : html`<ul class="doomed">${d.documents.map((doc) => html`<li class="filename">${doc.filename}</li>`)}</ul>`}
  <p>Search stops finding ${one ? 'it' : 'them'} at once${
    // A document that never got indexed (failed, or still queued) has no chunks to name.
    chunks > 0 ? ` (${plural(chunks, 'chunk')})` : ''
  }.${
    d.trashDays > 0
      ? html` ${one ? 'It goes' : 'They go'} to the <a href="/trash">Trash</a>, where ${one ? 'it' : 'they'} can be restored as ${one ? 'it was' : 'they were'} for ${plural(d.trashDays, 'day')}.`
      : html` The original file${one ? ' goes' : 's go'} too. This can't be undone.`
  }</p>`,
    action: '/documents/delete',
    fields: { ids: d.documents.map((doc) => doc.id), return_to: d.returnTo },
    confirm: one ? 'Delete document' : `Delete ${n} documents`,
    cancel: d.returnTo,
  });
}
