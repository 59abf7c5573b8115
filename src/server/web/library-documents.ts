import type Router from '@koa/router';
import { rm } from 'node:fs/promises';
import { notFound } from '../../core/errors.js';
import { documentPage } from '../../web/pages/document.js';
import { sendOriginal } from '../api/documents/file.js';
import { receiveMultipart } from '../api/documents/multipart.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { documentView, renderNotFound } from './library-common.js';
import { checkCsrf, formBody, render, requireUser } from './session.js';

/**
 * The document page, its original (for the signed-in browser: the API itself never reads cookies), delete,
 * and uploads into a project. Uploads take the CSRF token in X-CSRF-Token (script) or the form's `_csrf`
 * field (no script); the body goes through the API's multipart reader, so limits and type errors match.
 */
export function documentRoutes(router: Router<AppState>, s: Services): void {
  router.get('document', '/documents/:id', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const doc = await s.documents.get(user.id, ctx.params.id!);
    const project = doc && (await s.projects.get(user.id, doc.projectId));
    if (!doc || !project) return renderNotFound(ctx, user, 'document');
    render(
      ctx,
      documentPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        document: { ...documentView(doc), pages: doc.pages, warnings: doc.warnings, sha256: doc.sha256 },
        project: { id: project.id, name: project.name },
      }),
    );
  });

  router.get('document.file', '/documents/:id/file', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await sendOriginal(ctx, s, user.id, ctx.params.id!);
  });

  router.post('document.delete', '/documents/:id/delete', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    const doc = await s.documents.get(user.id, ctx.params.id!);
    if (!doc || !(await s.ingest.delete(user.id, doc.id))) return renderNotFound(ctx, user, 'document');
    ctx.status = 303;
    ctx.redirect(`/projects/${doc.projectId}`);
  });

  router.post('project.upload', '/projects/:id/upload', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const header = ctx.get('x-csrf-token');
    if (header) checkCsrf(ctx, s, header);
    const project = await s.projects.get(user.id, ctx.params.id!);
    if (!project) throw notFound('project');
    const received = await receiveMultipart(ctx.req, s.files, { maxFileBytes: s.config.maxUploadMb * 1024 * 1024, maxFiles: s.config.maxFiles, fields: ['_csrf'] });
    const temps = received.files.map((f) => f.tempPath);
    try {
      if (!header) checkCsrf(ctx, s, received.fields._csrf ?? '');
      const accepted = await s.ingest.accept(user.id, project.id, received.files, {});
      temps.length = 0;
      if (ctx.accepts('html', 'json') === 'json') {
        ctx.status = 202;
        ctx.body = { documents: accepted.map((a) => ({ id: a.document.id, filename: a.document.filename, duplicate: a.duplicate })) };
      } else {
        ctx.status = 303;
        ctx.redirect(`/projects/${project.id}`);
      }
    } finally {
      await Promise.all(temps.map((p) => rm(p, { force: true })));
    }
  });
}
