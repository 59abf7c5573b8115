import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { InvalidRequest, type OAuthError, toOAuthError, toOAuthWire } from '../../auth/oauth/errors.js';
import { firstUnstorable } from '../../core/storable-text.js';
import { suspectKey } from '../../core/json-checks.js';
import { rejectionReason } from '../rejection-reason.js';
import type { AppState } from '../state.js';

type Ctx = Context & { state: AppState };

/** RFC 6749 §5.1: token responses (and errors) must not be cached. */
export function noStore(ctx: Ctx): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/**
 * Renders an RFC 6749 §5.2 error body here, inside the endpoint, so the global /api/v1 error
 * handler never rewrites it into its own format. 5xx are logged and sent as server_error.
 */
export function sendOAuthError(ctx: Ctx, thrown: unknown): void {
  const err: OAuthError = toOAuthError(thrown);
  if (err.status >= 500) ctx.state.log?.error({ err: err.cause ?? err }, 'oauth endpoint failed');
  else ctx.state.log?.debug({ code: err.error, error: rejectionReason(ctx, err.description) }, 'oauth request rejected');
  noStore(ctx);
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.status = err.status;
  ctx.body = toOAuthWire(err);
}

const FORM = 'application/x-www-form-urlencoded';
const UNPARSED = Symbol.for('unparsedBody');
const JSON_TYPE = 'application/json';

/**
 * Parses the body of the token and revocation endpoints: JSON (the spec) or form-encoded
 * (RFC 6749, what standard client libraries send). Anything else, or a body that does not parse,
 * is invalid_request in the RFC error format. The registration endpoint (RFC 7591) takes JSON
 * only, at most 16 KiB, and names its errors invalid_client_metadata.
 */
export function oauthBody(opts: { jsonOnly?: boolean; limit?: string; error?: (description: string) => OAuthError } = {}): Middleware<AppState> {
  const limit = opts.limit ?? '64kb';
  const error = opts.error ?? ((description: string) => new InvalidRequest(description));
  const types = opts.jsonOnly ? [JSON_TYPE] : [JSON_TYPE, FORM];
  const parse = koaBody({ json: true, urlencoded: !opts.jsonOnly, text: false, multipart: false, jsonStrict: true, jsonLimit: limit, formLimit: limit, includeUnparsed: true }) as unknown as Middleware<AppState>;
  return async (ctx, next) => {
    // Media types are case-insensitive (RFC 9110); koa's `type` is the header's text before the `;`.
    const type = ctx.request.type.trim().toLowerCase();
    if (!types.includes(type)) {
      return sendOAuthError(ctx, error(`the request body must be ${types.join(' or ')}`));
    }
    try {
      await parse(ctx, async () => undefined);
    } catch (err) {
      const tooLarge = (err as { status?: number }).status === 413;
      return sendOAuthError(ctx, error(tooLarge ? `the request body is larger than ${limit}` : type === JSON_TYPE ? 'the request body is not valid JSON' : 'the request body could not be parsed'));
    }
    // A parameter given twice is refused (RFC 6749 §3.2) in JSON as in a form, and as the API refuses it: JSON.parse
    // would keep the last silently, where a proxy or library in front may read the first.
    const unparsed = (requestBody(ctx) as Record<symbol, unknown> | undefined)?.[UNPARSED];
    const repeated = type === JSON_TYPE && typeof unparsed === 'string' ? suspectKey(unparsed) : null;
    if (repeated) return sendOAuthError(ctx, error(`${repeated.path}: ${repeated.problem}`));
    // PostgreSQL fails on a NUL (a 500) where SQLite finds no such client: refused alike, naming the field.
    const unstorable = firstUnstorable(requestBody(ctx));
    if (unstorable) return sendOAuthError(ctx, error(`${unstorable.path || 'the request body'}: ${unstorable.problem}`));
    await next();
  };
}

export const requestBody = (ctx: Ctx): unknown => (ctx.request as { body?: unknown }).body;
