import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { KINDS } from '../../sources/kinds/index.js';
import { kindForm, OTHER_SCHEDULE, type SourceKindForm } from '../../web/pages/source-form.js';
import { sourceEditPage, sourceRemovePage, sourcesPage, type SourceRow, type SourcesPageData } from '../../web/pages/sources.js';
import { projectForSources } from '../api/sources/access.js';
import { pausedReason, sourceStatus } from '../api/sources/wire.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { renderNotFound } from './library-common.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';
import { DEFAULT_EVERY, formatEvery } from '../../sources/every.js';
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
    due: x.syncingSince === null && x.nextSyncAt <= s.now(),
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

/** The form's kind: its own fields (the form's description, or none for a kind the form does not know). */
const formOf = (kind: string): SourceKindForm => kindForm(kind) ?? { kind, title: kind, about: '', example: '', fields: [], globs: true };

/**
 * The options a kind's form sets, over `options` (what the source has): an empty field unsets its option, except a
 * secret, which stays as it is when left empty (and is never sent back to the page).
 */
function readKindOptions(ctx: WebContext, k: SourceKindForm, options: Record<string, unknown>): Record<string, unknown> {
  const out = { ...options };
  for (const f of k.fields) {
    if (f.secret) {
      const value = formField(ctx, `secret_${f.name}`);
      if (value) out[f.name] = value;
      continue;
    }
    const value = formField(ctx, f.name).trim();
    if (!value) delete out[f.name];
    else out[f.name] = f.type === 'number' ? Number(value) : value;
  }
  if (k.globs) {
    for (const key of ['include', 'exclude'] as const) {
      const given = lines(formField(ctx, key));
      if (given.length) out[key] = given;
      else delete out[key];
    }
  }
  return out;
}

/** The schedule picked: one of the usual, or the interval typed under "Another interval". */
const readEvery = (ctx: WebContext): string => {
  const picked = formField(ctx, 'every').trim();
  return picked === OTHER_SCHEDULE ? formField(ctx, 'every_other').trim() : picked;
};

/** What a form sends back to the page: never a secret. */
const withoutSecrets = (k: SourceKindForm, options: Record<string, unknown>) => Object.fromEntries(Object.entries(options).filter(([name]) => !k.fields.some((f) => f.secret && f.name === name)));

/** The edit form of a source, as it is or as it was sent back with what was wrong. */
async function showEdit(ctx: WebContext, s: Services, user: User, projectId: string, sid: string, extra: { error?: string; every?: string; options?: Record<string, unknown> } = {}, status = 200) {
  const project = await projectOf(ctx, s, user);
  if (!project) return;
  const source = await s.sources.get(projectId, sid).catch(() => null);
  if (!source) return renderNotFound(ctx, user, 'source');
  render(
    ctx,
    sourceEditPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      project,
      source: { id: source.id, kind: source.kind, url: source.url, every: extra.every ?? formatEvery(source.everyMs), options: withoutSecrets(formOf(source.kind), extra.options ?? source.options) },
      secretsSet: s.sources.secretNames(source),
      minEveryMs: s.sources.policy().minEveryMs,
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

async function show(ctx: WebContext, s: Services, user: User, extra: { error?: string; kind?: string; form?: SourcesPageData['form'] } = {}, status = 200) {
  const project = await projectOf(ctx, s, user);
  if (!project) return;
  const sources = await Promise.all((await s.sources.list(project.id)).map((x) => sourceRow(s, x)));
  const kind = extra.kind ?? (typeof ctx.query.kind === 'string' ? ctx.query.kind : undefined);
  const role = (await s.access.roleOn(user.actor, project.id)) === 'owner' ? ('owner' as const) : ('editor' as const);
  const page = { user, csrfToken: ctx.state.session!.csrfToken, project, role, sources, kinds: Object.keys(KINDS), policy: s.sources.policy() };
  render(ctx, sourcesPage({ ...page, ...extra, ...(kind ? { kind } : {}) }), status);
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
    const kind = formField(ctx, 'kind');
    const k = formOf(kind);
    const url = formField(ctx, 'url').trim();
    const every = readEvery(ctx) || DEFAULT_EVERY;
    const options = readKindOptions(ctx, k, {});
    try {
      await s.sources.create({ id: project.id, userId: user.id }, { url, every, ...(kind ? { kind } : {}), ...(Object.keys(options).length ? { options } : {}) });
    } catch (err) {
      if (isAppError(err) && err.status === 400) {
        const form = { url, every, options: withoutSecrets(k, options) };
        // Shown after a 303 to the tab, the kind as chosen (a reload re-posted the form).
        answerAsPage(ctx, `/projects/${project.id}/sources${kind ? `?kind=${encodeURIComponent(kind)}` : ''}`);
        return show(ctx, s, user, { error: `The source was not added: ${err.message}`, ...(kind ? { kind } : {}), form }, 400);
      }
      throw err;
    }
        flash(ctx, `Added ${url}: its first pass is under way.`);
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
    if (!source) return renderNotFound(ctx, user, 'source');
    const k = formOf(source.kind);
    const options = readKindOptions(ctx, k, source.options);
    const every = readEvery(ctx);
    try {
      await s.sources.update(project.id, source.id, { every, options });
    } catch (err) {
      if (!isAppError(err) || err.status !== 400) throw err;
      // Sent back as typed, but never a secret; after a 303 to the edit page.
      answerAsPage(ctx, `/projects/${project.id}/sources/${source.id}/edit`);
      return showEdit(ctx, s, user, project.id, source.id, { error: `Nothing was changed: ${err.message}`, every, options: withoutSecrets(k, options) }, 400);
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
    if (!source) return renderNotFound(ctx, user, 'source');
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
        if (err.code === 'not_found') return renderNotFound(ctx, user, 'source');
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
