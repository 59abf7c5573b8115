import type Router from '@koa/router';
import { toIso } from '../../core/clock.js';
import { isAppError } from '../../core/errors.js';
import { MOMENT, momentSpan } from '../../core/moment.js';
import { sentence } from '../../web/format.js';
import { documentsDeletePage } from '../../web/pages/document.js';
import { type DocumentsFilter, documentsPage, type DocumentsPageData } from '../../web/pages/documents.js';
import { statusCell } from '../../web/pages/project.js';
import { decodeListCursor, DocumentListQuery, encodeListCursor, listScope, toFilter } from '../api/documents/query.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import type { Role } from '../../access/roles.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import { DOCUMENT_ID } from '../../core/document-id.js';
import { failedOn, MAX_SELECTED, selectedIds } from './library-documents.js';
import { labelFieldProblem } from './library-labels.js';
import { documentView, queryString, editableProjects, userProjects } from './library-common.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { parseLabelField } from '../api/labels/names.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';
import { safeReturnTo } from './return-to.js';

/** Documents per page of the list. */
const PAGE = 50;

const FILTER_FIELDS = ['project_id', 'type', 'status', 'filename', 'labels', 'from', 'to', 'sort'] as const;

/**
 * `to` names a day (or time) the person wants included: the API's `uploaded_before` is the moment after it (none
 * after 9999-12-31, the last day a moment is written in). One that is no real moment goes as typed, to be refused in
 * the list's words.
 */
function uploadedTo(to: string): { uploaded_before?: string } {
  const span = momentSpan(to);
  if (!span) return { uploaded_before: to };
  const after = toIso(span.to);
  return MOMENT.test(after) ? { uploaded_before: after } : {};
}

function listUrl(filter: DocumentsFilter, cursor?: string): string {
  const params = new URLSearchParams();
  for (const k of FILTER_FIELDS) if (filter[k] && !(k === 'sort' && filter.sort === '-uploaded')) params.set(k, filter[k]);
  if (cursor) params.set('cursor', cursor);
  const q = params.toString();
  return q ? `/documents?${q}` : '/documents';
}

/**
 * The Documents page with the filters and page `param` reads (the address's query). `extra`: a refused label change,
 * said, with the selection and labels typed kept in the form.
 */
async function showDocuments(ctx: WebContext, s: Services, user: WebUser, param: (name: string) => string, extra: Pick<DocumentsPageData, 'error' | 'bulk'> = {}, status = 200): Promise<void> {
  const filter = Object.fromEntries(FILTER_FIELDS.map((k) => [k, param(k).trim()])) as unknown as DocumentsFilter;
  filter.sort ||= '-uploaded';
  const cursor = param('cursor') || undefined;
  const parsed = DocumentListQuery.safeParse({
    limit: PAGE,
    sort: filter.sort,
    ...(cursor ? { cursor } : {}),
    ...(filter.project_id ? { project_id: filter.project_id } : {}),
    ...(filter.type ? { type: filter.type } : {}),
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.filename ? { filename: filter.filename } : {}),
    ...(filter.labels ? { labels: filter.labels } : {}),
    ...(filter.from ? { uploaded_since: filter.from } : {}),
    ...(filter.to ? uploadedTo(filter.to) : {}),
  });
  let error: string | undefined;
  let query = parsed.data;
  if (!query) {
    const issue = parsed.error!.issues[0]!;
    error = `This filter could not be used (${String(issue.path[0] ?? 'query')}: ${issue.message}); showing everything instead.`;
    query = DocumentListQuery.parse({ limit: PAGE, sort: '-uploaded' });
  }
  // The filter language's fields are checked as they are read (toFilter): a bad one is said the same way.
  let listFilter;
  try {
    listFilter = toFilter(query);
  } catch (err) {
    if (!isAppError(err) || err.status !== 400) throw err;
    error = `This filter could not be used (${err.message.replace(/^query\./, '')}); showing everything instead.`;
    query = DocumentListQuery.parse({ limit: PAGE, sort: '-uploaded' });
    listFilter = toFilter(query);
  }
  const list = listScope(user.id, query.sort, listFilter);
  let at;
  try {
    at = decodeListCursor(query.sort, query.cursor, list);
  } catch {
    error = 'That page link is out of date; showing the first page.';
  }
  const projects = await userProjects(s, user);
  const readable = projects.map((p) => p.id);
  // A project filter the user may not read (or that is gone) lists nothing, as an empty project would.
  const scope = query.project_id ? readable.filter((id) => id === query.project_id) : readable;
  const [page, indexing, editable] = await Promise.all([s.documents.list(scope, listFilter, PAGE, at, query.sort), s.documents.countInWork(scope), editableProjects(s, user)]);
  const labels = await s.labels.ofDocuments(page.documents.map((x) => x.id));
  const fallback = projects.find((p) => p.isDefault && p.userId === user.id) ?? projects[0]!;
  render(
    ctx,
    documentsPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      filter,
      projects: projects.map((p) => ({ id: p.id, name: p.name })),
      moveTargets: editable.map((p) => ({ id: p.id, name: p.name })),
      documents: page.documents.map(documentView),
      labels: new Map([...labels].map(([id, ls]) => [id, ls.map((l) => ({ name: l.name, color: l.color }))])),
      next: page.next ? listUrl(filter, encodeListCursor(query.sort, page.next, list)) : null,
      first: at ? listUrl(filter) : null,
      indexing: [...indexing.values()].reduce((a, b) => a + b, 0),
      self: listUrl(filter, at ? query.cursor : undefined),
      upload: {
        projectId: fallback.id,
        projectName: fallback.name,
        limits: { maxFileMb: s.config.maxUploadMb, maxFiles: s.config.maxFiles },
      },
      ...(error ? { error } : {}),
      ...extra,
    }),
    status,
  );
}

/** The Documents page (every document, filtered, sorted, paged) and what its form does with a selection. */
export function documentListRoutes(router: Router<AppState>, s: Services): void {
  router.get('documents', '/documents', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showDocuments(ctx, s, user, (k) => queryString(ctx, k));
  });

  // Every page's live status (app.js): the state of the documents named, those the user may read; the others absent.
  router.get('documents.status', '/documents/status.json', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const ids = [...new Set(queryString(ctx, 'ids').split(',').filter((id) => DOCUMENT_ID.test(id)))].slice(0, MAX_SELECTED);
    const docs = await s.access.documents(user.actor, ids, 'read');
    ctx.body = { documents: docs.map((d) => ({ id: d.id, status: d.status, progress: d.progress, html: statusCell(d).value })) };
  });

  // The list's buttons: delete (asks first), move, retry the failed ones; then back to the same page of the list.
  router.post('documents.bulk', '/documents/bulk', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const returnTo = safeReturnTo(formField(ctx, 'return_to')) ?? '/documents';
    const back = () => {
      ctx.status = 303;
      ctx.redirect(returnTo);
    };
    const action = formField(ctx, 'action');
    // Delete, move and retry need an editor's role on each document's project: the others are left out, as if unselected.
    const { allowed: docs, refused } = await s.access.sortDocuments(user.actor, selectedIds(ctx), 'edit');
    // Those the user reads but may not change are named, with the role they hold and the one it needs.
    const refusals = refused.length === 0 ? '' : ` Left out: ${await refusedText(s, refused)}.`;
    if (docs.length === 0) {
      flash(ctx, refused.length > 0 ? sentence(refusals.trim().replace(/^Left out: /, '')) : 'Select one or more documents first.', 'error');
      return back();
    }
    if (action === 'delete') {
      // The confirmation at the list's address, after a 303 (answer-as-page.ts): a reload shows the list, posting nothing.
      answerAsPage(ctx, returnTo);
      return render(ctx, documentsDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, documents: docs, returnTo, trashDays: s.config.trashDays }));
    }
    if (action === 'label' || action === 'unlabel') {
      // Labels by name (comma-separated), each made in a document's project where missing: as PATCH /documents/{id} does.
      // Refused: the list again, the documents still selected and the labels as typed (a flash alone lost both), after a 303.
      const typed = formField(ctx, 'labels');
      const list = new URL(returnTo, 'http://list.invalid').searchParams;
      const refuse = (error: string) => {
        answerAsPage(ctx, returnTo);
        return showDocuments(ctx, s, user, (k) => list.get(k) ?? '', { error, bulk: { ids: selectedIds(ctx), labels: typed } }, 400);
      };
      let names: string[];
      try {
        names = parseLabelField(typed, 'labels');
      } catch (err) {
        if (!isAppError(err)) throw err;
        return refuse(labelFieldProblem(typed, err.message));
      }
      if (names.length === 0) return refuse('Name the labels to add or remove.');
      await s.labelService.change(docs, action === 'label' ? { add: names } : { remove: names });
      const n = docs.length === 1 ? '1 document' : `${docs.length} documents`;
      const quoted = names.map((x) => `“${x}”`).join(', ');
      flash(ctx, `${action === 'label' ? `Labelled ${n} ${quoted}.` : `Took ${quoted} off ${n}.`}${refusals}`, 'notice');
      return back();
    }
    if (action !== 'move' && action !== 'retry') {
      flash(ctx, 'Choose what to do with the selected documents.', 'error');
      return back();
    }
    const projectId = formField(ctx, 'project_id');
    const target = action === 'move' ? (await editableProjects(s, user)).find((p) => p.id === projectId) : undefined;
    if (action === 'move' && !target) {
      flash(ctx, 'Choose a project to move them to.', 'error');
      return back();
    }
    const done: string[] = [];
    const failed: string[] = [];
    for (const doc of docs) {
      if (action === 'retry' && doc.status !== 'failed') continue;
      try {
        if (action === 'move') await s.ingest.move(doc, projectId);
        else await s.ingest.retry(doc);
        done.push(doc.filename);
      } catch (err) {
        if (!isAppError(err) || err.status >= 500) throw err;
        failed.push(failedOn(doc.filename, err));
      }
    }
    const n = (k: number) => `${k} document${k === 1 ? '' : 's'}`;
    const what =
      action === 'move'
        ? done.length > 0
          ? `Moved ${n(done.length)} to “${target!.name}”.`
          : ''
        : done.length > 0
          ? `Queued ${n(done.length)} again.`
          : failed.length === 0
            ? 'None of the selected documents has failed: nothing to retry.'
            : '';
    const problems = failed.length > 0 ? ` Not ${action === 'move' ? 'moved' : 'retried'}: ${failed.join('; ')}.` : '';
    flash(ctx, sentence(`${what}${problems}${refusals}`.trim()), done.length > 0 ? 'notice' : 'error');
    back();
  });
}

/** The refusals of the documents a bulk action left out (the first few), each naming the document, its project and the roles. */
async function refusedText(s: Services, refused: { document: DocumentRecord; role: Role }[]): Promise<string> {
  const SHOWN = 5;
  const each = await Promise.all(refused.slice(0, SHOWN).map(async (r) => (await s.access.documentRefused(r.document, r.role, 'edit')).message));
  return `${each.join('; ')}${refused.length > SHOWN ? `; and ${refused.length - SHOWN} more` : ''}`;
}
