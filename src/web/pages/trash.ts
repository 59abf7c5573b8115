import { formatBytes, formatTime, typeName } from '../format.js';
import { html } from '../html.js';
import { listPager } from './list-pager.js';
import { confirmPage } from './confirm.js';
import { layout } from './layout.js';
import { pathLine } from './project.js';
import { forRow } from './row-action.js';

/** A document in the trash, as the Trash page lists it. */
export interface TrashRow {
  id: string;
  filename: string;
  path: string | null;
  contentType: string;
  sizeBytes: number;
  projectId: string;
  projectName: string;
  trashedAt: number;
  /** Who deleted it (an e-mail), null when unknown. */
  trashedBy: string | null;
  purgeAt: number;
}

export interface TrashPageData {
  user: { email: string };
  csrfToken: string;
  entries: TrashRow[];
  /** How many days the trash keeps a document. */
  days: number;
  next: string | null;
  first: string | null;
}

function row(e: TrashRow, csrf: string) {
  return html`<tr data-document-id="${e.id}">
  <td class="name-cell"><span class="filename">${e.filename}</span>${pathLine(e.path)}</td>
  <td data-label="Project"><a href="/projects/${e.projectId}" class="project-name">${e.projectName}</a></td>
  <td data-label="Type">${typeName(e.contentType)}</td>
  <td class="num" data-label="Size">${formatBytes(e.sizeBytes)}</td>
  <td data-label="Deleted">${formatTime(e.trashedAt)}${e.trashedBy ? html` <span class="muted">by ${e.trashedBy}</span>` : null}</td>
  <td data-label="Removed for good">${formatTime(e.purgeAt)}</td>
  <td class="actions-cell">
    <form method="post" action="/trash/${e.id}/restore" class="inline">
      <input type="hidden" name="_csrf" value="${csrf}">
      <button type="submit" class="small">${forRow('Restore', e.filename)}</button>
    </form>
    <a href="/trash/${e.id}/purge" class="button danger small">${forRow('Delete for good…', e.filename)}</a>
  </td>
</tr>`;
}

/** The trash of the projects the user edits: restore a document (the same id, searchable again at once) or remove it for good. */
export function trashPage(d: TrashPageData) {
  return layout(
    { title: 'Trash', user: d.user, csrfToken: d.csrfToken, active: 'trash', wide: true },
    html`<section class="card">
  <h1>Trash</h1>
  <p class="muted">Deleted documents of the projects you edit stay here for ${d.days} day${d.days === 1 ? '' : 's'}, out of search, and can be restored as they were. Then they are removed for good.</p>
  ${
    d.entries.length === 0
      ? html`<p class="muted" id="trash-empty">${d.first ? 'No more documents in the trash.' : 'The trash is empty.'}</p>`
      : html`<div class="scroll"><table class="documents rows" id="trash">
    <thead><tr><th scope="col" class="col-name">Name</th><th scope="col">Project</th><th scope="col">Type</th><th scope="col" class="num">Size</th><th scope="col">Deleted</th><th scope="col">Removed for good</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${d.entries.map((e) => row(e, d.csrfToken))}</tbody>
  </table></div>`
  }
  ${listPager(d.first, d.next)}
</section>`,
  );
}

/** Removing a document in the trash for good asks first. */
export function trashPurgePage(d: { user: { email: string }; csrfToken: string; entry: { id: string; filename: string } }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'trash',
    title: `Delete “${d.entry.filename}” for good?`,
    body: html`<p>It leaves the trash now: its text, its chunks and its original file are removed, and it can't be restored.</p>`,
    action: `/trash/${d.entry.id}/purge`,
    confirm: 'Delete for good',
    cancel: '/trash',
  });
}
