import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import { sentence } from '../../web/format.js';
import { trashPage, trashPurgePage } from '../../web/pages/trash.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { failedOn, selectedIds } from './library-documents.js';
import { safeReturnTo } from './return-to.js';
import { queryString, renderNotFound } from './library-common.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

/** Entries per page of the Trash page. */
const PAGE = 50;

/** The trashed document, when the user edits its project; else the not-found page (null). */
async function entryFor(ctx: WebContext, s: Services, user: WebUser, id: string): Promise<DocumentRecord | null> {
  try {
    return await s.access.trashed(user.actor, id, 'edit');
  } catch (err) {
    if (!isAppError(err) || err.status !== 404) throw err;
    renderNotFound(ctx, user, 'document');
    return null;
  }
}

const cursorOf = (at: { trashedAt: number; id: string }) => `${at.trashedAt}.${at.id}`;

function positionOf(raw: string): { trashedAt: number; id: string } | undefined {
  const m = /^(\d{1,16})\.(doc_[0-9a-z]{9}[0-9A-Za-z]{12})$/.exec(raw);
  return m ? { trashedAt: Number(m[1]), id: m[2]! } : undefined;
}

/** The Trash page (the trash of the projects the user edits), restoring from it, and removing for good after a confirmation. */
export function trashRoutes(router: Router<AppState>, s: Services): void {
  router.get('trash', '/trash', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const at = positionOf(queryString(ctx, 'after'));
    const scope = await s.access.trashScope(user.actor);
    const { documents, next } = await s.documents.listTrash(scope, PAGE, at);
    const [names, emails] = await Promise.all([
      s.projects.names([...new Set(documents.map((d) => d.projectId))]),
      s.users.emails(documents.flatMap((d) => (d.trashedBy ? [d.trashedBy] : []))),
    ]);
    const projectName = new Map(names.map((p) => [p.id, p.name]));
    render(
      ctx,
      trashPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        days: s.config.trashDays,
        entries: documents.map((d) => ({
          id: d.id,
          filename: d.filename,
          path: d.path,
          contentType: d.contentType,
          sizeBytes: d.sizeBytes,
          projectId: d.projectId,
          projectName: projectName.get(d.projectId) ?? '',
          trashedAt: d.trashedAt!,
          trashedBy: d.trashedBy ? (emails.get(d.trashedBy) ?? null) : null,
          purgeAt: s.ingest.purgeAt(d),
        })),
        next: next ? `/trash?after=${cursorOf(next)}` : null,
        first: at ? '/trash' : null,
      }),
    );
  });

  // The Undo of a delete's notice: puts back those of `ids` still in the trash of a project the user edits (others are
  // passed over as if not named: a document one may not read is never confirmed to exist), then back to the page.
  router.post('trash.restore.many', '/trash/restore', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const restored: string[] = [];
    const failed: string[] = [];
    for (const id of selectedIds(ctx)) {
      const doc = await s.access.trashed(user.actor, id, 'edit').catch((err: unknown) => {
        if (isAppError(err) && err.status === 404) return null;
        throw err;
      });
      if (!doc) continue;
      try {
        restored.push((await s.ingest.restore(doc)).filename);
      } catch (err) {
        if (!isAppError(err) || err.status >= 500) throw err;
        failed.push(failedOn(doc.filename, err));
      }
    }
    if (failed.length > 0) flash(ctx, `${restored.length > 0 ? `Restored ${restored.length}; not` : 'Not'} restored: ${failed.join('; ')}.`, 'error');
    else if (restored.length === 1) flash(ctx, `Restored “${restored[0]}”: search finds it again.`);
    else if (restored.length > 1) flash(ctx, `Restored ${restored.length} documents: search finds them again.`);
    else flash(ctx, 'Nothing to restore: those documents are no longer in the Trash.', 'error');
    ctx.status = 303;
    ctx.redirect(safeReturnTo(formField(ctx, 'return_to')) ?? '/documents');
  });

  router.post('trash.restore', '/trash/:id/restore', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const doc = await entryFor(ctx, s, user, ctx.params.id!);
    if (!doc) return;
    try {
      const restored = await s.ingest.restore(doc);
      flash(ctx, `Restored “${restored.filename}”: search finds it again.`);
      ctx.status = 303;
      ctx.redirect(`/documents/${restored.id}`);
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      flash(ctx, `Not restored: ${sentence(err.message)}`, 'error');
      ctx.status = 303;
      ctx.redirect('/trash');
    }
  });

  router.get('trash.purge.confirm', '/trash/:id/purge', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const doc = await entryFor(ctx, s, user, ctx.params.id!);
    if (doc) render(ctx, trashPurgePage({ user, csrfToken: ctx.state.session!.csrfToken, entry: doc }));
  });

  router.post('trash.purge', '/trash/:id/purge', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const doc = await entryFor(ctx, s, user, ctx.params.id!);
    if (!doc) return;
    if (await s.ingest.purge(doc)) flash(ctx, `Deleted “${doc.filename}” for good.`);
    ctx.status = 303;
    ctx.redirect('/trash');
  });
}
