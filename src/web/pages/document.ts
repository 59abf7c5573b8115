import { formatBytes, formatTime, typeName } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { type DocumentRow, statusCell } from './project.js';

export interface DocumentPageData {
  user: { email: string };
  csrfToken: string;
  document: DocumentRow & { pages: number | null; warnings: string[]; sha256: string };
  project: { id: string; name: string };
}

export function documentPage(d: DocumentPageData) {
  const doc = d.document;
  const file = `/documents/${doc.id}/file`;
  return layout(
    { title: doc.filename, user: d.user, csrfToken: d.csrfToken, active: 'projects' },
    html`<section class="card">
  <p class="crumbs"><a href="/projects">Projects</a> › <a href="/projects/${d.project.id}">${d.project.name}</a> ›</p>
  <h1 class="filename">${doc.filename}</h1>
  <dl class="facts">
    <dt>Project</dt><dd><a href="/projects/${d.project.id}">${d.project.name}</a></dd>
    <dt>Type</dt><dd>${typeName(doc.contentType)}</dd>
    <dt>Size</dt><dd>${formatBytes(doc.sizeBytes)}</dd>
    <dt>Pages</dt><dd>${doc.pages ?? '—'}</dd>
    <dt>Chunks</dt><dd>${doc.chunkCount}</dd>
    <dt>Status</dt><dd>${statusCell(doc)}</dd>
    <dt>Uploaded</dt><dd>${formatTime(doc.createdAt)}</dd>
    <dt>SHA-256</dt><dd><code class="hash">${doc.sha256}</code></dd>
  </dl>
  ${
    doc.warnings.length > 0
      ? html`<h2>Warnings</h2><ul class="warnings">${doc.warnings.map((w) => html`<li>${w}</li>`)}</ul>`
      : null
  }
  <div class="actions">
    <a href="${file}" class="button">Open the original</a>
    <a href="${file}" download="${doc.filename}" class="button secondary">Download</a>
    <a href="/search?project=${d.project.id}" class="button secondary">Search this project</a>
  </div>
  <h2>Delete</h2>
  <p>Deleting removes the document from search at once; the original file goes too.</p>
  <form method="post" action="/documents/${doc.id}/delete">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <button type="submit" class="danger">Delete this document</button>
  </form>
</section>`,
  );
}
