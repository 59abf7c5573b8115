import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import type { AppState } from '../state.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is safe to echo), returns it in
 * the response header, and writes one access-log line when the response finishes: at `debug` for the
 * requests `quiet` names (a load balancer's passing health checks, several a second per replica, would
 * otherwise be most of the log), else at `info`.
 */
export function requestId(
  logger: Logger,
  opts: {
    quiet?: (ctx: { path: string; status: number }) => boolean | Promise<boolean>;
    /** Told each request once its response is decided (metrics), with its seconds. */
    finished?: (ctx: Parameters<Middleware<AppState>>[0], seconds: number) => void;
  } = {},
): Middleware<AppState> {
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
      const elapsed = performance.now() - started;
      opts.finished?.(ctx, elapsed / 1000);
      const line = {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(elapsed),
        // Koa's ctx.ip: the socket's peer, or with --trust-proxy the address our proxies saw (proxy-hops from the right).
        client_ip: ctx.ip,
        user: ctx.state.principal?.userId ?? ctx.state.session?.userId ?? undefined,
      };
      if (await opts.quiet?.(ctx)) ctx.state.log.debug(line, 'request');
      else ctx.state.log.info(line, 'request');
    }
  };
}
