import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { isDatabaseUnavailable } from '../../core/database-unavailable.js';
import { insufficientStorage, isDiskFull } from '../../core/disk-full.js';
import { AppError, type ErrorCode, isAppError } from '../../core/errors.js';
import { isStorageUnavailable, StorageUnavailable } from '../../store/objects/object-store.js';
import { withTheme } from '../../web/pages/layout.js';
import { messagePage } from '../../web/pages/message.js';
import { themeOf } from '../web/theme.js';
import { rejectionReason } from '../rejection-reason.js';
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
 * status (koa-body's 400/413/415) keep it; a full disk is a 507; a database that cannot be reached (PostgreSQL
 * restarting) or an object store that is away (LanceDB's own report of it included) is a 503; everything else is an unexposed 500.
 */
export function toAppError(err: unknown, contentEncoding = ''): AppError {
  if (isAppError(err)) return err.code === 'internal_error' && isDiskFull(err.cause) ? insufficientStorage(err) : err;
  if (isDiskFull(err)) return insufficientStorage(err);
  // The store first: LanceDB's store errors are socket errors underneath too, which would read as the database.
  if (isStorageUnavailable(err)) return new StorageUnavailable(err);
  if (isDatabaseUnavailable(err)) return new AppError('service_unavailable', 'the database cannot be reached right now; try again shortly', { cause: err, expose: true });
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string; name?: string; code?: string };
  // zlib under the body parsers: a body whose bytes do not match its Content-Encoding.
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) {
    return new AppError('invalid_request', `the request body could not be decoded as ${contentEncoding || 'its Content-Encoding'}`, { cause: err });
  }
  const status = e?.status ?? e?.statusCode;
  // The routers answer a method they do not implement at all (TRACE, PROPFIND) with 501.
  if (status === 501) return new AppError('method_not_allowed', 'this method is not supported', { cause: err });
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

/** The field a refusal's message opens with (`query.cursor: …`), as validation words it. */
const NAMED_FIELD = /^((?:body|query|params)(?:\.[^:\s]+)?): /;

/**
 * What an error's `details` say: the thrower's, or for a refusal whose message names a field and that gave none, that
 * field (docs/api.md: every field error lists its issues as {path, message}). Many places refuse one field in words
 * (a cursor, a metadata filter, a source's option); a client reading `details` must not find some of them bare.
 */
function detailsOf(err: AppError): unknown {
  if (err.details !== undefined || err.code !== 'invalid_request') return err.details;
  const field = NAMED_FIELD.exec(err.message)?.[1];
  return field === undefined ? undefined : [{ path: field, message: err.message }];
}

/** Wire form of an /api/v1 error. 5xx bodies never carry the internal message. */
export function toWire(err: AppError, requestId: string) {
  const details = detailsOf(err);
  return {
    error: {
      code: err.code,
      message: err.expose ? err.message : 'internal error — see the server log for this request id',
      ...(details !== undefined && err.expose ? { details } : {}),
      request_id: requestId,
    },
  };
}

const DRAIN_MAX_BYTES = 1024 * 1024;
const DRAIN_MAX_MS = 2000;

/**
 * Reads and discards the rest of a small body, whether or not its reading had begun (a form upload refused at its
 * first file part stops reading there); true when it was read to its end. Answered and closed with some of it still
 * coming, the client meets a closed socket while it writes (EPIPE) instead of the answer.
 */
function drainSmallUnreadBody(req: IncomingMessage): Promise<boolean> {
  const declared = Number(req.headers['content-length']);
  // A client waiting for `100 Continue` sends nothing; one that streams (no length) or sends a lot is cut off.
  if (req.destroyed || req.headers.expect || !(declared <= DRAIN_MAX_BYTES)) return Promise.resolve(false);
  if (req.readableEnded) return Promise.resolve(true);
  req.unpipe();
  return new Promise((resolve) => {
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      req.off('end', onEnd).off('error', onFail).off('close', onFail);
      resolve(drained);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(false);
    const timer = setTimeout(onFail, DRAIN_MAX_MS);
    req.once('end', onEnd).once('error', onFail).once('close', onFail);
    req.resume();
  });
}

const FILE_HEADERS = ['Cache-Control', 'ETag', 'Last-Modified', 'Content-Disposition', 'Accept-Ranges'];

/** The only place errors are caught, logged and rendered: JSON under /api, an HTML page elsewhere. */
export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('not_found', `no route for ${ctx.method} ${ctx.path}`);
      // allowedMethods() answers 405 with an Allow header and no body; give it the error body too.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      // allowedMethods() answers OPTIONS with a 200 and an empty text/plain body; it has no content: 204.
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.body === '' && ctx.response.get('Allow')) ctx.status = 204;
    } catch (thrown) {
      const err = toAppError(thrown, ctx.get('content-encoding'));
      // A small body refused before it was read is drained, so the client gets the answer rather than a
      // broken pipe; anything else left unread ends the connection with the answer.
      if (!ctx.req.complete && !(await drainSmallUnreadBody(ctx.req))) ctx.set('Connection', 'close');
      // `error`, not `msg`: pino writes the line's own message under `msg`, and a reader keeps only one of the two.
      if (err.status >= 500 && err.logLevel === 'warn') ctx.state.log?.warn({ code: err.code, error: rejectionReason(ctx, err.message) }, 'request refused');
      else if (err.status >= 500) ctx.state.log?.error({ err: err.cause ?? err }, 'request failed');
      else ctx.state.log?.debug({ code: err.code, error: rejectionReason(ctx, err.message) }, 'request rejected');
      // The error is not the file the handler had begun to describe: none of its caching, validators or name stays.
      for (const h of FILE_HEADERS) ctx.remove(h);
      ctx.status = err.status;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      if (ctx.path.startsWith('/api/') || ctx.path.startsWith('/.well-known/') || !ctx.accepts('html')) {
        ctx.body = toWire(err, ctx.state.requestId);
      } else {
        ctx.type = 'html';
        const page = messagePage({
          title: err.status === 404 ? 'Not found' : err.status >= 500 ? 'Something went wrong' : 'Request not accepted',
          message: err.expose ? err.message : `An internal error occurred (request id ${ctx.state.requestId}).`,
          user: null,
        });
        ctx.body = withTheme(page, themeOf(ctx)).value;
      }
    }
  };
}
