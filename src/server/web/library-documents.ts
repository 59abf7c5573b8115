import { DOCUMENT_ID } from '../../core/document-id.js';
import type Router from '@koa/router';
import { type AppError, isAppError } from '../../core/errors.js';
import { CITATION_UNITS, type DocumentType } from '../../ingest/types.js';
import { sentence } from '../../web/format.js';
import { type DocumentPageData, documentPage, documentsDeletePage } from '../../web/pages/document.js';
import { DocumentFilename } from '../api/documents/wire.js';
import { sendOriginal } from '../api/documents/file.js';
import { cursorAt, documentText } from '../api/documents/text.js';
import { hasThumbnail, sendThumbnail, ThumbnailQuery } from '../api/documents/thumbnail.js';
import { plainMessage } from '../api/validate.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { splitOcrNote } from '../../ingest/ocr-stage.js';
import type { ProjectAction } from '../../access/roles.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import { documentView, editableProjects, openedPassage, queryString, readableAttachments, renderNotFound } from './library-common.js';
import { requireFormUser } from './csrf.js';
import { answerAsPage } from './answer-as-page.js';
import { flash, flashRefusal } from './flash.js';
import { formBody, formField, formFields } from './form.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';
import { safeReturnTo } from './return-to.js';


/** Chunks of text the document page shows at a time. */
const TEXT_CHUNKS = 100;
/** Documents one form may act on (a page of the Documents list). */
export const MAX_SELECTED = 100;


/** The `ids` of a form: well-formed, each once, at most a page's worth. */
export function selectedIds(ctx: WebContext): string[] {
  return [...new Set(formFields(ctx, 'ids').filter((id) => DOCUMENT_ID.test(id)))].slice(0, MAX_SELECTED);
}

/** A failed action on one document, for a flash: “notes.pdf”: why. */
export const failedOn = (filename: string, err: AppError) => `“${filename}”: ${err.message}`;

/** `?page=N` of the document page's preview, within the document's pages (1 when absent or out of range). */
function previewPage(raw: string, pages: number | null): number {
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
  return n >= 1 && n <= (pages ?? 1) ? n : 1;
}

/** The document, when the user may do `action` with it; else the not-found page (null). A 403 is thrown. */
export async function documentFor(ctx: WebContext, s: Services, user: WebUser, id: string, action: ProjectAction): Promise<DocumentRecord | null> {
  try {
    return (await s.access.document(user.actor, id, action)).document;
  } catch (err) {
    if (!isAppError(err) || err.status !== 404) throw err;
    renderNotFound(ctx, user, 'document');
    return null;
  }
}

/** The document page; `typed`: what a refused form held, kept in its field. */
export async function showDocument(ctx: WebContext, s: Services, user: WebUser, id: string, error?: string, status = 200, typed?: DocumentPageData['typed']) {
  const doc = await documentFor(ctx, s, user, id, 'read');
  if (!doc) return;
  const [[project], role, editable, uploaders, attachments, [message], passage, labels, vocabulary] = await Promise.all([
    s.projects.names([doc.projectId]),
    s.access.roleOn(user.actor, doc.projectId),
    editableProjects(s, user),
    s.users.emails([doc.userId]),
    readableAttachments(s, user, doc.id),
    doc.attachedTo ? s.access.documents(user.actor, [doc.attachedTo], 'read') : [],
    openedPassage(ctx, s, user, doc),
    s.labels.ofDocuments([doc.id]),
    s.labels.list([doc.projectId]),
  ]);
  // `text` is a window's cursor (its next link), or a chunk's index (app.js, opening a passage past the first window).
  const at = queryString(ctx, 'text');
  const cursor = /^\d{1,9}$/.test(at) ? cursorAt(doc, Number(at)) : at || undefined;
  const page = previewPage(queryString(ctx, 'page'), doc.pages);
  // A result links here at its page (`?page=N#chunk-K`): the text shown starts there, so its chunk is on the page.
  const fromPage = queryString(ctx, 'page') && page > 1 ? page : undefined;
  const text = await documentText(s, user.actor, doc.id, TEXT_CHUNKS, cursor, fromPage).catch((err: unknown) => {
    if (isAppError(err) && err.status === 400) return documentText(s, user.actor, doc.id, TEXT_CHUNKS); // a stale link: from the start
    throw err;
  });
  // What OCR read is information, shown among the facts; only a low confidence is a warning.
  const { ocr, warnings } = splitOcrNote(doc.warnings);
  const data: DocumentPageData = {
    user,
    csrfToken: ctx.state.session!.csrfToken,
    document: {
      ...documentView(doc),
      pages: doc.pages,
      warnings,
      sha256: doc.sha256,
      language: doc.languageSetting ? { code: doc.languageSetting, set: true } : doc.language ? { code: doc.language, set: false } : null,
      ocrLanguages: doc.ocrLanguages,
    },
    project: { id: doc.projectId, name: project?.name ?? '' },
    role: role ?? 'viewer',
    uploadedBy: uploaders.get(doc.userId) ?? null,
    projects: editable.map((p) => ({ id: p.id, name: p.name })),
    text: { pages: text.pages, next: text.next_cursor, continued: cursor !== undefined || (text.pages[0]?.chunks[0]?.index ?? 0) > 0 },
    // A failed document's page would be a broken image (an unreadable file, or one not drawn yet): no preview.
    previewed: hasThumbnail(doc.contentType) && doc.status !== 'failed',
    previewPage: page,
    unit: CITATION_UNITS[doc.contentType as DocumentType] ?? null,
    ocr,
    attachments,
    attachedTo: message ? { id: message.id, filename: message.filename } : null,
    opened: passage ? { index: passage.index, answer: passage.answer } : null,
    labels: (labels.get(doc.id) ?? []).map((l) => ({ name: l.name, color: l.color })),
    vocabulary: vocabulary.map((l) => ({ name: l.name, color: l.color })),
    ...(error ? { error } : {}),
    ...(typed ? { typed } : {}),
  };
  render(ctx, documentPage(data), status);
}

/**
 * Deletes the documents among `ids` the user may delete, one by one (each leaves search at once), and says what
 * happened on the next page.
 */
async function deleteDocuments(ctx: WebContext, s: Services, user: WebUser, ids: string[]): Promise<void> {
  const docs = await s.access.documents(user.actor, ids, 'edit');
  const deleted: DocumentRecord[] = [];
  for (const doc of docs) if (await s.ingest.delete(doc, user.actor.userId)) deleted.push(doc);
  // The days the confirmation named, and an Undo while they are in the trash.
  const days = s.config.trashDays;
  const kept = days > 0 ? `: the Trash keeps ${deleted.length === 1 ? 'it' : 'them'} for ${days === 1 ? '1 day' : `${days} days`}` : '';
  const undo = days > 0 ? deleted.map((d) => d.id) : [];
  if (deleted.length === 1) flash(ctx, `Deleted “${deleted[0]!.filename}”${kept}.`, 'notice', undo);
  else if (deleted.length > 1) flash(ctx, `Deleted ${deleted.length} documents${kept}.`, 'notice', undo);
  // A confirmation posted again (another tab, Back and resubmit) finds nothing left: say so, not nothing.
  else flash(ctx, `Nothing was deleted: ${ids.length === 1 ? 'that document is' : 'those documents are'} not in your library, or already in the Trash.`, 'error');
}

/**
 * The document page (facts, first-page image, the text search sees, rename, move, retry), its original and
 * thumbnail (for the signed-in browser: the API itself never reads cookies), and delete after a confirmation.
 */
export function documentRoutes(router: Router<AppState>, s: Services): void {
  router.get('document', '/documents/:id', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showDocument(ctx, s, user, ctx.params.id!);
  });

  router.get('document.file', '/documents/:id/file', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await sendOriginal(ctx, s, user.actor, ctx.params.id!);
  });

  router.get('document.thumbnail', '/documents/:id/thumbnail.webp', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const page = ThumbnailQuery.safeParse({ ...(queryString(ctx, 'page') ? { page: queryString(ctx, 'page') } : {}) });
    if (!page.success) return renderNotFound(ctx, user, 'document');
    await sendThumbnail(ctx, s, user.actor, ctx.params.id!, page.data.page);
  });

  router.get('document.delete.confirm', '/documents/:id/delete', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const doc = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
    if (!doc) return;
    const returnTo = safeReturnTo(queryString(ctx, 'return_to')) ?? `/projects/${doc.projectId}`;
    render(ctx, documentsDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, documents: [doc], returnTo, trashDays: s.config.trashDays }));
  });

  // Confirmed on the page above (or the Documents page's bulk delete): the documents named in `ids`.
  router.post('documents.delete', '/documents/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    await deleteDocuments(ctx, s, user, selectedIds(ctx));
    ctx.status = 303;
    ctx.redirect(safeReturnTo(formField(ctx, 'return_to')) ?? '/documents');
  });

  router.post('document.delete', '/documents/:id/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const doc = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
    if (!doc) return;
    await deleteDocuments(ctx, s, user, [doc.id]);
    ctx.status = 303;
    ctx.redirect(`/projects/${doc.projectId}`);
  });

  router.post('document.rename', '/documents/:id/rename', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const name = DocumentFilename.safeParse(formField(ctx, 'filename'));
    if (!name.success) {
      // The document page says why with the name typed, after a 303 (a reload re-posted the form).
      answerAsPage(ctx, `/documents/${ctx.params.id!}`);
      return showDocument(ctx, s, user, ctx.params.id!, `The name ${plainMessage(name.error.issues[0]!)}.`, 400, { filename: formField(ctx, 'filename') });
    }
    const found = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
    if (!found) return;
    const doc = await s.ingest.rename(found, name.data);
    flash(ctx, `Renamed to “${doc.filename}”.`);
    ctx.status = 303;
    ctx.redirect(`/documents/${doc.id}`);
  });

  router.post('document.move', '/documents/:id/move', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const projectId = formField(ctx, 'project_id');
    try {
      const found = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
      if (!found) return;
      await s.access.check(user.actor, projectId, 'edit');
      const doc = await s.ingest.move(found, projectId);
      const [project] = await s.projects.names([projectId]);
      flash(ctx, `Moved to “${project?.name ?? ''}”: search finds it there now.`);
      ctx.status = 303;
      ctx.redirect(`/documents/${doc.id}`);
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      if (err.status === 404 && err.message.startsWith('document')) return renderNotFound(ctx, user, 'document');
      answerAsPage(ctx, `/documents/${ctx.params.id!}`);
      await showDocument(ctx, s, user, ctx.params.id!, `Not moved: ${sentence(err.message)}`, err.status);
    }
  });

  router.post('document.retry', '/documents/:id/retry', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    try {
      const found = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
      if (!found) return;
      const doc = await s.ingest.retry(found);
      flash(ctx, `“${doc.filename}” is queued again.`);
    } catch (err) {
      if (isAppError(err) && err.status === 404) return renderNotFound(ctx, user, 'document');
      flashRefusal(ctx, err);
    }
    ctx.status = 303;
    ctx.redirect(safeReturnTo(formField(ctx, 'return_to')) ?? `/documents/${ctx.params.id}`);
  });
}
