import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { KINDS } from '../../sources/kinds/index.js';
import { sourceEditPage, sourceRemovePage, sourcesPage, type SourceRow } from '../../web/pages/sources.js';
import { projectForSources } from '../api/sources/access.js';
import { pausedReason, sourceStatus } from '../api/sources/wire.js';
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
    pausedReason: pausedReason(x),
    error: x.error,
    lastSync: x.lastSyncAt,
    nextSync: x.status === 'paused' ? null : x.nextSyncAt,
    lastResult: x.lastResult,
    secrets: s.sources.secretNames(x),
    itemErrors: await s.sources.itemErrors(x.id, ITEM_ERRORS_SHOWN),
    held: x.heldDeletions,
    reenter: s.sources.secretsToReenter(x),
  };
}

/** The lines of a textarea as a list of globs (blank lines dropped). */
const lines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

const globs = (options: Record<string, unknown>, key: string): string[] => (Array.isArray(options[key]) ? (options[key] as string[]) : []);

/** The edit form of a source, as it is or as it was sent back with what was wrong. */
async function showEdit(ctx: WebContext, s: Services, user: User, projectId: string, sid: string, extra: { error?: string; every?: string; options?: Record<string, unknown> } = {}, status = 200) {
  const project = await projectOf(ctx, s, user);
  if (!project) return;
  const source = await s.sources.get(projectId, sid).catch(() => null);
  if (!source) return renderNotFound(ctx, user, 'project');
  const kind = s.sources.kind(source);
  const options = extra.options ?? source.options;
  render(
    ctx,
    sourceEditPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      project,
      source: {
        id: source.id,
        kind: source.kind,
        url: source.url,
        every: extra.every ?? formatEvery(source.everyMs),
        include: globs(options, 'include'),
        exclude: globs(options, 'exclude'),
        username: typeof options.username === 'string' ? options.username : null,
      },
      takesUsername: kind.urlCredentials !== null,
      secretOptions: kind.secretOptions,
      secretsSet: s.sources.secretNames(source),
      ...(extra.error ? { error: extra.error } : {}),
    }),
    status,
  );
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

  router.get('project.sources.edit', '/projects/:id/sources/:sid/edit', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showEdit(ctx, s, user, ctx.params.id!, ctx.params.sid!);
  });

  // The schedule, the globs and the credentials: the other options stay as they are; a secret left empty keeps its value.
  router.post('project.sources.edit.save', '/projects/:id/sources/:sid/edit', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const project = await projectOf(ctx, s, user);
    if (!project) return;
    const source = await s.sources.get(project.id, ctx.params.sid!).catch(() => null);
    if (!source) return renderNotFound(ctx, user, 'project');
    const kind = s.sources.kind(source);
    const options: Record<string, unknown> = { ...source.options };
    for (const key of ['include', 'exclude'] as const) {
      const given = lines(formField(ctx, key));
      if (given.length) options[key] = given;
      else delete options[key];
    }
    if (kind.urlCredentials) {
      const name = formField(ctx, 'username').trim();
      if (name) options.username = name;
      else delete options.username;
    }
    for (const secret of kind.secretOptions) {
      const value = formField(ctx, `secret_${secret}`);
      if (value) options[secret] = value;
    }
    const every = formField(ctx, 'every').trim();
    try {
      await s.sources.update(project.id, source.id, { every, options });
    } catch (err) {
      if (!isAppError(err) || err.status !== 400) throw err;
      // Sent back as typed, but never a secret.
      const shown = Object.fromEntries(Object.entries(options).filter(([k]) => !kind.secretOptions.includes(k)));
      return showEdit(ctx, s, user, project.id, source.id, { error: `Nothing was changed: ${err.message}`, every, options: shown }, 400);
    }
    flash(ctx, `Saved ${source.url}: its next pass starts now, and its documents stay.`);
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
