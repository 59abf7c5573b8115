import type Router from '@koa/router';
import type { ParsedUrlQuery } from 'node:querystring';
import { isDeepStrictEqual } from 'node:util';
import { AppError, isAppError } from '../../core/errors.js';
import { relevanceFloor } from '../../search/floor.js';
import { SEARCH_MODES, SearchBody, type SearchMode } from '../../search/query.js';
import { FILTER_PARAMS, filtersFromParams, isFilterParam } from '../../core/filter-params.js';
import { Filters, type FiltersInput, normalFilters } from '../../core/filters.js';
import { deleteSaved, renameSaved, SavedSearchBody, SavedSearchName, saveSearch, savedSearchesSeen } from '../api/saved-searches.js';
import { plainMessage } from '../api/validate.js';
import { searchQueryFor } from '../api/search.js';
import { PAGE_FACETS, savedSearchDeletePage, searchPage, type SearchPageData, type SearchView } from '../../web/pages/search.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { editableProjects, queryString, userProjects } from './library-common.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash, redirectWithOutcome } from './flash.js';
import { formBody, formField, formFields } from './form.js';
import { render } from './render.js';
import { safeReturnTo } from './return-to.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

const RESULTS_PER_PAGE = 20;

/**
 * The home page and GET /search: the same search service as POST /api/v1/search, rendered on the server
 * so it works without JavaScript; grouped by document unless `view=passages` or `document=` (one document's
 * passages), paged by the API's cursors (`cursor=`). Validation messages come from the API's schema.
 */
async function showSearch(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireUser(ctx, s);
  if (user) await renderSearch(ctx, s, user, ctx.query);
}

/**
 * The search page for the address's `query`: the request's own, or the page a sidebar form was sent from, shown again
 * with its refusal (`renaming`, `saving`: answered with the refusal's `status`).
 */
async function renderSearch(ctx: WebContext, s: Services, user: WebUser, query: ParsedUrlQuery, refused: Pick<SearchPageData, 'renaming' | 'saving'> = {}, status = 200): Promise<void> {
  const param = (name: string) => (typeof query[name] === 'string' ? query[name] : '');
  const q = param('q');
  const modeParam = param('mode');
  const mode: SearchMode = (SEARCH_MODES as readonly string[]).includes(modeParam) ? (modeParam as SearchMode) : 'hybrid';
  const documentId = param('document');
  const view: SearchView = documentId || param('view') === 'passages' ? 'passages' : 'documents';
  // `project` once, or repeated (a saved search of several projects); an empty one is "all projects".
  const projectIds = [...new Set([query.project ?? []].flat().filter((id) => id !== ''))];
  const projectId = projectIds.length === 1 ? projectIds[0]! : '';
  const cursor = param('cursor');
  const projects = await userProjects(s, user);
  // Nothing uploaded yet (documents still in work count: they are coming): the page says so rather than "no matches".
  const libraryEmpty = projects.every((p) => p.documentCount === 0);
  // The filters as GET /api/v1/documents takes them (core/filter-params.ts), kept in the page's links.
  const filterParams = Object.entries(query)
    .filter(([k]) => isFilterParam(k))
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v ?? '']).filter((x) => x !== '').map((x): [string, string] => [k, x]));
  // Rename and Delete… are offered as access allows them (an author since made a viewer of the project may delete, not rename).
  const seen = await savedSearchesSeen(s, user.actor);
  const offered = await s.access.savedSearchesOffer(user.actor, seen);
  const savedSearches = seen.map((v, i) => ({ id: v.id, name: v.name, href: savedSearchHref(v.search), shared: v.projectId !== null, renamable: offered[i]!.rename, deletable: offered[i]!.delete }));
  const data = {
    user,
    csrfToken: ctx.state.session!.csrfToken,
    q,
    mode,
    view,
    projectId,
    ...(projectIds.length > 1 ? { projectIds } : {}),
    projects,
    libraryEmpty,
    floor: relevanceFloor(s.embedder.id),
    filterParams,
    savedSearches,
    ...refused,
  };
  if (q.trim() === '') return render(ctx, searchPage(data), status);
  // A saved search or a bookmark may name a project since deleted or no longer shared: say so in words (the
  // search's own refusal names its id, which the person never saw).
  const readable = projectIds.length > 0 ? new Set(await s.access.readable(user.actor)) : new Set<string>();
  const gone = projectIds.filter((id) => !readable.has(id));
  if (gone.length > 0) {
    const which = projectIds.length === 1 ? 'The project this search is limited to is' : `${gone.length === 1 ? 'One' : gone.length} of the projects this search is limited to ${gone.length === 1 ? 'is' : 'are'}`;
    return render(ctx, searchPage({ ...data, error: `${which} not in your library any more (deleted, or no longer shared with you). Choose a project above, or search all of them.` }), 404);
  }
  // Where the Save form may share the search: the projects the user edits.
  const shareable = (await editableProjects(s, user)).map((p) => ({ id: p.id, name: p.name }));
  let filters;
  try {
    filters = filtersFromParams(Object.fromEntries(filterParams.reduce((m, [k, v]) => m.set(k, [...(m.get(k) ?? []), v]), new Map<string, string[]>())));
  } catch (err) {
    if (!isAppError(err)) throw err;
    return render(ctx, searchPage({ ...data, error: err.message }), 400);
  }
  const body = SearchBody.safeParse({
    query: q,
    mode,
    limit: RESULTS_PER_PAGE,
    group: view === 'documents' ? 'document' : 'none',
    ...(projectIds.length > 0 ? { project_ids: projectIds } : {}),
    ...(documentId ? { document_ids: [documentId] } : {}),
    ...(cursor ? { cursor } : {}),
    ...(filters ? { filters } : {}),
    facets: PAGE_FACETS.map((f) => f.facet),
  });
  if (!body.success) {
    const issue = body.error.issues[0]!;
    if (issue.path[0] === 'document_ids') return render(ctx, searchPage({ ...data, error: `document "${documentId}" not found` }), 404);
    // In words: "The labels filter must be at most 64 characters.", not "The search filters.labels Too big: expected…".
    const field = issue.path.filter((p): p is string => typeof p === 'string');
    const what = field.join('.') === 'query' ? 'The search text' : field[0] === 'filters' && field.length > 1 ? `The ${field.slice(1).join('.')} filter` : `The search ${field.join('.')}`;
    const said = plainMessage(issue).replace(/\.$/, '');
    return render(ctx, searchPage({ ...data, error: `${what}${/^(must|is) /.test(said) ? ' ' : ': '}${said}.` }), 400);
  }
  try {
    const page = await s.search.searchPage(await searchQueryFor(s, user.actor, body.data));
    // searchQueryFor refused a document its user may not read (a 404, as for one that does not exist).
    const [document] = documentId ? await s.access.documents(user.actor, [documentId], 'read') : [];
    render(
      ctx,
      searchPage({ ...data, shareable, ...(document ? { document: { id: document.id, filename: document.filename } } : {}), response: page.response, start: page.start, previousCursor: page.previousCursor }),
      status,
    );
  } catch (err) {
    if (isAppError(err) && err.status < 500) {
      const message = err.message.startsWith('body.cursor') ? 'That page link belongs to another search: search again to start from the first page.' : err.message;
      return render(ctx, searchPage({ ...data, error: message }), err.status);
    }
    // The search page again, not the bare error page: the query, filters and saved searches stay, to try again.
    // What failed is logged (with the request id) and never shown.
    const failed = isAppError(err) ? err : null;
    if (failed?.logLevel === 'warn') ctx.state.log?.warn({ code: failed.code, error: failed.message }, 'search failed');
    else ctx.state.log?.error({ err: failed?.cause ?? err }, 'search failed');
    const failedWith = failed?.status ?? 500;
    for (const [k, v] of Object.entries(failed?.headers ?? {})) ctx.set(k, v);
    const why = failedWith === 503 ? 'a service it needs is unavailable or busy right now' : 'an error on the server stopped it';
    render(ctx, searchPage({ ...data, error: `The search failed: ${why}. Try again in a moment; if it keeps failing, give your administrator the request id ${ctx.state.requestId}.` }), failedWith);
  }
}

/** A saved search (a POST /search body) as this page's address. */
function savedSearchHref(search: Record<string, unknown>): string {
  const params = new URLSearchParams({ q: String(search.query ?? '') });
  for (const id of (search.project_ids as string[] | undefined) ?? []) params.append('project', id);
  if (typeof search.mode === 'string' && search.mode !== 'hybrid') params.set('mode', search.mode);
  if (search.group === 'none') params.set('view', 'passages');
  for (const [k, v] of pageFilterParams(search.filters as FiltersInput | undefined)) params.append(k, v);
  return `/search?${params.toString()}`;
}

/**
 * Saved filters as the page writes its own: each value of a list its own parameter (a chip of its own, removable
 * alone, as when it was saved), metadata as `metadata.KEY=VALUE` or `metadata.KEY.$gte=…` where that reads back as the
 * same condition, else as its JSON (`metadata={"year":2020}`: the shorthand would also match the text "2020").
 */
function pageFilterParams(f: FiltersInput | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const name of FILTER_PARAMS) {
    const v = f?.[name];
    if (v === undefined) continue;
    if (name === 'metadata') for (const [key, c] of Object.entries(v as Record<string, unknown>)) out.push(...metadataParams(key, c));
    else for (const x of [v].flat()) out.push([name, String(x)]);
  }
  return out;
}

function metadataParams(key: string, c: unknown): [string, string][] {
  const asJson: [string, string][] = [['metadata', JSON.stringify({ [key]: c })]];
  const shorthand = new Map<string, [string, string]>();
  const add = (name: string, x: unknown) => shorthand.set(`${name}=${String(x)}`, [name, String(x)]);
  if (c === null || typeof c !== 'object') add(`metadata.${key}`, c);
  else
    for (const [op, x] of Object.entries(c)) {
      if (op === '$eq') add(`metadata.${key}`, x);
      else if (op === '$in' && Array.isArray(x)) for (const y of x) add(`metadata.${key}`, y);
      else add(`metadata.${key}.${op}`, x);
    }
  const conditions = (f: FiltersInput | undefined) => {
    const parsed = Filters.safeParse(f);
    return parsed.success ? normalFilters(parsed.data)?.metadata : undefined;
  };
  const grouped: Record<string, string[]> = {};
  for (const [k, v] of shorthand.values()) (grouped[k] ??= []).push(v);
  try {
    const read = conditions(filtersFromParams(grouped));
    return read !== undefined && isDeepStrictEqual(read, conditions({ metadata: { [key]: c } } as FiltersInput)) ? [...shorthand.values()] : asJson;
  } catch {
    return asJson; // a key the shorthand cannot spell (`a.$b`)
  }
}

/**
 * The search page's "Save this search" form: the search it shows (q, project, mode, view and the filter
 * parameters, as hidden fields) saved under a name through the same saveSearch as POST /api/v1/saved-searches,
 * shared with a project when one is chosen; then back to the search, which lists it.
 */
async function saveFromPage(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireFormUser(ctx, s);
  if (!user) return;
  const fields = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
  const filterParams = Object.entries(fields)
    .filter(([k]) => isFilterParam(k))
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map(String).filter((x) => x !== '').map((x): [string, string] => [k, x]));
  const q = formField(ctx, 'q');
  const projectIds = [...new Set(formFields(ctx, 'project').filter((id) => id !== ''))];
  const mode = formField(ctx, 'mode') || 'hybrid';
  const view = formField(ctx, 'view') === 'passages' ? 'passages' : 'documents';
  const share = formField(ctx, 'share');
  const back = new URLSearchParams({ q });
  for (const id of projectIds) back.append('project', id);
  if (mode !== 'hybrid') back.set('mode', mode);
  for (const [k, v] of filterParams) back.append(k, v);
  if (view === 'passages') back.set('view', view);
  ctx.status = 303;
  ctx.redirect(`/search?${back.toString()}`);
  const notSaved = (message: string) => `Not saved: ${message}${/[.!?]$/.test(message) ? '' : '.'}`;
  const refuse = (message: string) => flash(ctx, notSaved(message), 'error');
  const typed = formField(ctx, 'name');
  // A name or a sharing refused is the search again with the form open, the name and project as chosen (a flash alone
  // lost them), after a 303 to that search (answer-as-page.ts).
  const refuseName = (message: string, status: number) => {
    answerAsPage(ctx, `/search?${back.toString()}`);
    return renderSearch(ctx, s, user, queryOf(`/search?${back.toString()}`), { saving: { name: typed, share, error: notSaved(message) } }, status);
  };
  const name = SavedSearchName.safeParse(typed);
  if (!name.success) return refuseName(`the name ${plainMessage(name.error.issues[0]!)}`, 400);
  let search;
  try {
    const filters = filtersFromParams(Object.fromEntries(filterParams.reduce((m, [k, v]) => m.set(k, [...(m.get(k) ?? []), v]), new Map<string, string[]>())));
    const parsed = SavedSearchBody.safeParse({
      query: q,
      mode,
      group: view === 'passages' ? 'none' : 'document',
      ...(projectIds.length > 0 ? { project_ids: projectIds } : {}),
      ...(filters ? { filters } : {}),
    });
    if (!parsed.success) return refuse(`the search ${parsed.error.issues[0]!.path.join('.')} ${plainMessage(parsed.error.issues[0]!)}.`);
    search = parsed.data;
  } catch (err) {
    if (!isAppError(err)) throw err;
    return refuse(err.message);
  }
  try {
    const saved = await saveSearch(s, user.actor, name.data, search, share || null);
    flash(ctx, `Saved “${saved.name}”${share ? ': the project’s members see it too' : ''}.`);
  } catch (err) {
    // A project the user may not share with or read is refused as the API refuses it (403, 404).
    if (!isAppError(err) || (err.status !== 400 && err.status !== 409)) throw err;
    // A name they have (409), or a shared search over another project (400): said in the page's words, not the API's field.
    const otherProject = err.message.startsWith('body.search.project_ids:');
    return refuseName(otherProject ? 'a search shared with a project may search only that project: choose it alone under Project above, or keep the search to yourself' : err.message.replace(/^body\.search\./, ''), err.status);
  }
}

/** The search page a sidebar form was sent from (its `back` field), to go back to; else the empty search page. */
function searchAddress(back: string): string {
  const to = safeReturnTo(back);
  return to && /^\/search(\?|$)/.test(to) ? to : '/search';
}

const queryOf = (address: string): ParsedUrlQuery => {
  const query: ParsedUrlQuery = {};
  for (const [k, v] of new URL(address, 'http://page').searchParams) {
    const had = query[k];
    query[k] = had === undefined ? v : [had, v].flat();
  }
  return query;
};

/**
 * The sidebar's Rename: its author's saved search under a new name (renameSaved, as PATCH /api/v1/saved-searches/{id}),
 * back to the page it was sent from. A name refused (empty, too long, one they have) is that page again with the name
 * as typed; one the user does not see, or does not own, is the not-found or not-allowed page, as the API's 404 and 403.
 */
async function renameFromPage(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireFormUser(ctx, s);
  if (!user) return;
  const saved = await s.savedSearches.get(ctx.params.id!);
  await s.access.savedSearch(user.actor, saved, 'rename');
  const back = searchAddress(formField(ctx, 'back'));
  const typed = formField(ctx, 'name');
  await redirectWithOutcome(
    ctx,
    back,
    async () => {
      const name = SavedSearchName.safeParse(typed);
      if (!name.success) throw new AppError('invalid_request', `the name ${plainMessage(name.error.issues[0]!)}`);
      const renamed = await renameSaved(s, user.actor, saved!.id, name.data);
      return renamed.name === saved!.name ? `“${renamed.name}” keeps its name.` : `Renamed “${saved!.name}” to “${renamed.name}”.`;
    },
    (error, status) => renderSearch(ctx, s, user, queryOf(back), { renaming: { id: saved!.id, name: typed, error: `“${saved!.name}” not renamed: ${error}` } }, status),
  );
}

/** The sidebar's Delete… asks first (a page of its own, as every destructive web action); the saved search's author only. */
async function confirmDelete(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireUser(ctx, s);
  if (!user) return;
  const saved = await s.savedSearches.get(ctx.params.id!);
  await s.access.savedSearch(user.actor, saved, 'delete');
  render(ctx, savedSearchDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, saved: { id: saved!.id, name: saved!.name, shared: saved!.projectId !== null }, back: searchAddress(queryString(ctx, 'back')) }));
}

async function deleteFromPage(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireFormUser(ctx, s);
  if (!user) return;
  const deleted = await deleteSaved(s, user.actor, ctx.params.id!);
  flash(ctx, `Deleted the saved search “${deleted.name}”.`);
  ctx.status = 303;
  ctx.redirect(searchAddress(formField(ctx, 'back')));
}

export function searchRoutes(router: Router<AppState>, s: Services): void {
  router.get('home', '/', (ctx) => showSearch(ctx, s));
  router.get('search', '/search', (ctx) => showSearch(ctx, s));
  router.post('search.save', '/search/save', formBody(), (ctx) => saveFromPage(ctx, s));
  router.post('search.saved.rename', '/search/saved/:id/rename', formBody(), (ctx) => renameFromPage(ctx, s));
  router.get('search.saved.delete.confirm', '/search/saved/:id/delete', (ctx) => confirmDelete(ctx, s));
  router.post('search.saved.delete', '/search/saved/:id/delete', formBody(), (ctx) => deleteFromPage(ctx, s));
}
