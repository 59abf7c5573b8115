/**
 * The one error type every capability throws. The server's error handler turns it into the
 * `{error: {code, message, details?, request_id}}` body; `expose: false` (every 5xx by default)
 * keeps internals out of responses, the way koa's ctx.onerror and oidc-provider's err_out do.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  | 'insufficient_storage'
  | 'quota_exceeded';

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  insufficient_storage: 507,
  quota_exceeded: 507,
};

export interface AppErrorOptions {
  details?: unknown;
  cause?: unknown;
  /** Extra response headers (WWW-Authenticate, Retry-After). */
  headers?: Record<string, string>;
  expose?: boolean;
  /** A 5xx that is an expected condition (overload), logged as a warning rather than an error. */
  logLevel?: 'warn';
}

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly headers: Record<string, string>;
  readonly expose: boolean;
  readonly logLevel: 'warn' | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.expose = options.expose ?? this.status < 500;
    this.logLevel = options.logLevel;
  }
}

export const invalidRequest = (message: string, details?: unknown): AppError =>
  new AppError('invalid_request', message, { details });

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);

export const conflict = (message: string, details?: unknown): AppError =>
  new AppError('conflict', message, { details });

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
