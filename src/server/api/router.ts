import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Principal } from '../../auth/principal.js';
import { bearer } from '../middleware/bearer.js';
import { varyOnCredential } from '../middleware/caching.js';
import { buildOpenApi } from '../openapi.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { jsonBody } from './json-body.js';
import type { ApiRoute } from './route.js';
import { parseInput } from './validate.js';

function handle(route: ApiRoute): Middleware<AppState> {
  return async (ctx) => {
    const body = route.body ? parseInput(route.body, (ctx.request as { body?: unknown }).body ?? {}, 'body') : undefined;
    const query = route.query ? parseInput(route.query, ctx.query, 'query') : undefined;
    const params = route.params ? parseInput(route.params, (ctx as unknown as { params: unknown }).params, 'params') : undefined;
    const result = await route.handler({ body, query, params, principal: ctx.state.principal as Principal, ctx: ctx as never });
    ctx.status = result.status;
    for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
    if (result.body !== undefined) ctx.body = result.body;
    varyOnCredential(ctx, 'Authorization');
  };
}

/** Mounts the declared routes under /api/v1 with their scope checks, body parsing and validation. */
export function apiRouter(s: Services, routes: ApiRoute[]): Router<AppState> {
  // Case-sensitive: `/API/V1/…` is no API path (errors there would be web pages, and a 405 would lose its Allow).
  const router = new Router<AppState>({ prefix: '/api/v1', sensitive: true });
  for (const route of routes) {
    const stack: Middleware<AppState>[] = [];
    if (route.scope) stack.push(bearer(s.bearerResolvers, route.scope, route.credentials, route.tokensWith));
    if (!route.rawBody && ['POST', 'PATCH', 'PUT'].includes(route.method)) stack.push(jsonBody(route.method) as Middleware<AppState>);
    stack.push(handle(route));
    router.register(route.path, [route.method], stack, { name: route.name });
  }
  // The spec: every endpoint under /api/v1 requires authentication; the API's description too (any credential).
  router.get('openapi', '/openapi.json', bearer(s.bearerResolvers, 'authenticated'), (ctx) => {
    ctx.body = buildOpenApi(routes, { version: s.version, serverUrl: s.publicUrl() });
  });
  return router;
}
