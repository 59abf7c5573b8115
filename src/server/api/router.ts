import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Middleware } from 'koa';
import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../core/errors.js';
import { bearer } from '../middleware/bearer.js';
import { buildOpenApi } from '../openapi.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { MAX_JSON_DEPTH, tooDeep } from './json-depth.js';
import type { ApiRoute } from './route.js';
import { parseInput } from './validate.js';

const JSON_LIMIT = '1mb';

function jsonBody(): Middleware {
  const parse = koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: JSON_LIMIT, jsonStrict: true });
  return async (ctx, next) => {
    const type = ctx.request.type;
    if (ctx.request.length === 0 || (!ctx.request.length && !ctx.get('transfer-encoding'))) {
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    if (type !== 'application/json') throw new AppError('unsupported_media_type', 'request body must be application/json');
    // koa-body bundles its own copy of the koa types; the runtime objects are the same.
    await (parse as unknown as Middleware)(ctx, async () => undefined);
    if (tooDeep((ctx.request as { body?: unknown }).body)) throw new AppError('invalid_request', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    return next();
  };
}

function handle(route: ApiRoute): Middleware<AppState> {
  return async (ctx) => {
    const body = route.body ? parseInput(route.body, (ctx.request as { body?: unknown }).body ?? {}, 'body') : undefined;
    const query = route.query ? parseInput(route.query, ctx.query, 'query') : undefined;
    const params = route.params ? parseInput(route.params, (ctx as unknown as { params: unknown }).params, 'params') : undefined;
    const result = await route.handler({ body, query, params, principal: ctx.state.principal as Principal, ctx: ctx as never });
    ctx.status = result.status;
    for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
    if (result.body !== undefined) ctx.body = result.body;
  };
}

/** Mounts the declared routes under /api/v1 with their scope checks, body parsing and validation. */
export function apiRouter(s: Services, routes: ApiRoute[]): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  for (const route of routes) {
    const stack: Middleware<AppState>[] = [];
    if (route.scope) stack.push(bearer(s.bearerResolvers, route.scope, route.credentials, route.tokensWith));
    if (!route.rawBody && ['POST', 'PATCH', 'PUT'].includes(route.method)) stack.push(jsonBody() as Middleware<AppState>);
    stack.push(handle(route));
    router.register(route.path, [route.method], stack, { name: route.name });
  }
  // The spec: every endpoint under /api/v1 requires authentication; the API's description too (any credential).
  router.get('openapi', '/openapi.json', bearer(s.bearerResolvers, 'authenticated'), (ctx) => {
    ctx.body = buildOpenApi(routes, { version: s.version, serverUrl: s.publicUrl() });
  });
  return router;
}
