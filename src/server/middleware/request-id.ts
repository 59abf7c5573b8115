import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { AppState } from '../state.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is safe to echo), returns it in
 * the response header, and writes one access-log line when the response finishes.
 */
export function requestId(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ req_id: id });
    ctx.set('X-Request-Id', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          user: ctx.state.principal?.userId ?? ctx.state.session?.userId ?? undefined,
        },
        'request',
      );
    }
  };
}
