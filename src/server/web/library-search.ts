import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { SEARCH_MODES, SearchBody, type SearchMode, toSearchQuery } from '../../search/query.js';
import { searchPage } from '../../web/pages/search.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { queryString, userProjects } from './library-common.js';
import { render, requireUser, type WebContext } from './session.js';

const RESULTS_PER_PAGE = 20;

/**
 * The home page and GET /search: the same search service as POST /api/v1/search, rendered on the server
 * so it works without JavaScript. Validation messages come from the API's schema.
 */
async function showSearch(ctx: WebContext, s: Services): Promise<void> {
  const user = await requireUser(ctx, s);
  if (!user) return;
  const q = queryString(ctx, 'q');
  const modeParam = queryString(ctx, 'mode');
  const mode: SearchMode = (SEARCH_MODES as readonly string[]).includes(modeParam) ? (modeParam as SearchMode) : 'hybrid';
  const projectId = queryString(ctx, 'project');
  const data = { user, csrfToken: ctx.state.session!.csrfToken, q, mode, projectId, projects: await userProjects(s, user.id) };
  if (q.trim() === '') return render(ctx, searchPage(data));
  const body = SearchBody.safeParse({ query: q, mode, limit: RESULTS_PER_PAGE, ...(projectId ? { project_ids: [projectId] } : {}) });
  if (!body.success) {
    const issue = body.error.issues[0]!;
    return render(ctx, searchPage({ ...data, error: `The search ${issue.path.join('.') === 'query' ? 'text' : issue.path.join('.')} ${issue.message}.` }), 400);
  }
  try {
    const res = await s.search.search(toSearchQuery(user.id, body.data));
    render(ctx, searchPage({ ...data, results: res.results, warnings: res.warnings }));
  } catch (err) {
    if (!isAppError(err) || err.status >= 500) throw err;
    render(ctx, searchPage({ ...data, error: err.message }), err.status);
  }
}

export function searchRoutes(router: Router<AppState>, s: Services): void {
  router.get('home', '/', (ctx) => showSearch(ctx, s));
  router.get('search', '/search', (ctx) => showSearch(ctx, s));
}
