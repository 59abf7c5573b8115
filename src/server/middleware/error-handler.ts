import type { Middleware } from 'koa';
import { insufficientStorage, isDiskFull } from '../../core/disk-full.js';
import { AppError, type ErrorCode, isAppError } from '../../core/errors.js';
import { messagePage } from '../../web/pages/message.js';
import type { AppState } from '../state.js';

const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/**
 * Normalises anything thrown below into an AppError. Errors from libraries that carry an HTTP
 * status (koa-body's 400/413/415) keep it; a full disk is a 507; everything else is an unexposed 500.
 */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err.code === 'internal_error' && isDiskFull(err.cause) ? insufficientStorage(err) : err;
  if (isDiskFull(err)) return insufficientStorage(err);
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string; name?: string };
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_FOR_STATUS[status] ?? 'invalid_request';
    const message =
      // co-body (under koa-body) throws a SyntaxError with status 400 for unparsable or non-object JSON.
      e.type === 'entity.parse.failed' || (status === 400 && e.name === 'SyntaxError')
        ? 'request body is not valid JSON'
        : e.expose !== false && e.message
          ? e.message
          : 'bad request';
    return new AppError(code, message, { cause: err });
  }
  return new AppError('internal_error', 'internal error', { cause: err, expose: false });
}

/** Wire form of an /api/v1 error. 5xx bodies never carry the internal message. */
export function toWire(err: AppError, requestId: string) {
  return {
    error: {
      code: err.code,
      message: err.expose ? err.message : 'internal error — see the server log for this request id',
      ...(err.details !== undefined && err.expose ? { details: err.details } : {}),
      request_id: requestId,
    },
  };
}

/** The only place errors are caught, logged and rendered: JSON under /api, an HTML page elsewhere. */
export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('not_found', `no route for ${ctx.method} ${ctx.path}`);
      // allowedMethods() answers 405 with an Allow header and no body; give it the error body too.
      if (ctx.status === 405 && ctx.body === undefined) throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
    } catch (thrown) {
      const err = toAppError(thrown);
      if (err.status >= 500) ctx.state.log?.error({ err: err.cause ?? err }, 'request failed');
      else ctx.state.log?.debug({ code: err.code, msg: err.message }, 'request rejected');
      ctx.status = err.status;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      if (ctx.path.startsWith('/api/') || ctx.path.startsWith('/.well-known/') || !ctx.accepts('html')) {
        ctx.body = toWire(err, ctx.state.requestId);
      } else {
        ctx.type = 'html';
        ctx.body = messagePage({
          title: err.status === 404 ? 'Not found' : err.status >= 500 ? 'Something went wrong' : 'Request not accepted',
          message: err.expose ? err.message : `An internal error occurred (request id ${ctx.state.requestId}).`,
          user: null,
        }).value;
      }
    }
  };
}
