import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { KINDS } from '../../sources/kinds/index.js';
import { sourceRemovePage, sourcesPage, type SourceRow } from '../../web/pages/sources.js';
import { projectForSources } from '../api/sources/access.js';
import { sourceStatus } from '../api/sources/wire.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { renderNotFound } from './library-common.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';
import { formatEvery } from '../../sources/every.js';
import type { SourceRecord } from '../../store/sql/sources.js';

type User = WebUser;

/** Items with an error a source card lists. */
const ITEM_ERRORS_SHOWN = 10;

async function sourceRow(s: Services, x: SourceRecord): Promise<SourceRow> {
  return {
    id: x.id,
    kind: x.kind,
    url: x.url,
    every: formatEvery(x.everyMs),
    status: sourceStatus(x),
    pausedReason: x.pausedReason,
    error: x.error,
    lastSync: x.lastSyncAt,
    nextSync: x.status === 'paused' ? null : x.nextSyncAt,
    lastResult: x.lastResult,
    secrets: s.sources.secretNames(x),
    itemErrors: await s.sources.itemErrors(x.id, ITEM_ERRORS_SHOWN),
  };
}

/** The project the page is about, through the one access check of sources; null (a 404 page sent) when not allowed. */
async function projectOf(ctx: WebContext, s: Services, user: User) {
  try {
    return await projectForSources(s, user.actor, ctx.params.id!);
  } catch (err) {
    if (isAppError(err) && err.code === 'not_found') {
      renderNotFound(ctx, user, 'project');
      return null;
    }
    throw err;
  }
}

async function show(ctx: WebContext, s: Services, user: User, extra: { error?: string; form?: { kind: string; url: string; every: string; username: string } } = {}, status = 200) {
  const project = await projectOf(ctx, s, user);
  if (!project) return;
  const sources = await Promise.all((await s.sources.list(project.id)).map((x) => sourceRow(s, x)));
  render(ctx, sourcesPage({ user, csrfToken: ctx.state.session!.csrfToken, project, sources, kinds: Object.keys(KINDS), ...extra }), status);
}

/** The Sources tab of a project: its sources with their state, adding one, and each one's actions. */
export function sourceRoutes(router: Router<AppState>, s: Services): void {
  router.get('project.sources', '/projects/:id/sources', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await show(ctx, s, user);
  });

  router.post('project.sources.add', '/projects/:id/sources', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const project = await projectOf(ctx, s, user);
    if (!project) return;
    const form = { kind: formField(ctx, 'kind'), url: formField(ctx, 'url').trim(), every: formField(ctx, 'every').trim() || '1h', username: formField(ctx, 'username') };
    const password = formField(ctx, 'password');
    const options = { ...(form.username ? { username: form.username } : {}), ...(password ? { password } : {}) };
    try {
      await s.sources.create({ id: project.id, userId: user.id }, { url: form.url, every: form.every, ...(form.kind ? { kind: form.kind } : {}), ...(Object.keys(options).length ? { options } : {}) });
    } catch (err) {
      if (isAppError(err) && err.status === 400) return show(ctx, s, user, { error: `The source was not added: ${err.message}`, form }, 400);
      throw err;
    }
    flash(ctx, `Added ${form.url}: its first pass is under way.`);
    ctx.status = 303;
    ctx.redirect(`/projects/${project.id}/sources`);
  });

  router.get('project.sources.remove.confirm', '/projects/:id/sources/:sid/remove', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const project = await projectOf(ctx, s, user);
    if (!project) return;
    const source = await s.sources.get(project.id, ctx.params.sid!).catch(() => null);
    if (!source) return renderNotFound(ctx, user, 'project');
    const documents = (await s.documents.ofSource(source.id)).length;
    render(ctx, sourceRemovePage({ user, csrfToken: ctx.state.session!.csrfToken, projectId: project.id, source, documents }));
  });

  const action = (name: string, run: (projectId: string, sid: string, ctx: WebContext) => Promise<string>) =>
    router.post(`project.sources.${name}`, `/projects/:id/sources/:sid/${name}`, formBody(), async (ctx) => {
      const user = await requireFormUser(ctx, s);
      if (!user) return;
      const project = await projectOf(ctx, s, user);
      if (!project) return;
      try {
        flash(ctx, await run(project.id, ctx.params.sid!, ctx));
      } catch (err) {
        if (!isAppError(err) || err.status >= 500) throw err;
        if (err.code === 'not_found') return renderNotFound(ctx, user, 'project');
        flash(ctx, err.message, 'error');
      }
      ctx.status = 303;
      ctx.redirect(`/projects/${project.id}/sources`);
    });
  action('sync', async (p, sid) => `A pass of ${(await s.sources.sync(p, sid, false)).url} is due now.`);
  action('resume', async (p, sid) => `${(await s.sources.sync(p, sid, true)).url} resumed: its next pass removes what it finds gone.`);
  action('pause', async (p, sid) => `${(await s.sources.update(p, sid, { status: 'paused' })).url} paused.`);
  action('remove', async (p, sid, ctx) => {
    const keep = formField(ctx, 'keep_documents') === 'true';
    const source = await s.sources.get(p, sid);
    await s.sources.remove(p, sid, keep);
    return `Removed ${source.url}${keep ? '; its documents stay' : ' and its documents'}.`;
  });
}
