/**
 * The only module that knows the OAuth 2.0 error codes (RFC 6749 §4.1.2.1 and §5.2, RFC 7009,
 * plus the spec's `invalid_redirect_uri`). Each error carries its HTTP status, the RFC `error`
 * code, an `error_description` and `expose`: a 5xx never shows its internal message
 * (oidc-provider's errors.js / err_out.js).
 */
export class OAuthError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly expose = status < 500,
    headers: Record<string, string> = {},
    cause?: unknown,
  ) {
    super(description, cause === undefined ? undefined : { cause });
    this.name = 'OAuthError';
    this.headers = headers;
  }
}

const kind = (error: string, status = 400) =>
  class extends OAuthError {
    constructor(description: string) {
      super(error, description, status);
    }
  };

export const InvalidRequest = kind('invalid_request');
export const InvalidGrant = kind('invalid_grant');
export const InvalidScope = kind('invalid_scope');
export const UnsupportedGrantType = kind('unsupported_grant_type');
export const UnsupportedResponseType = kind('unsupported_response_type');
/** RFC 8707 §2: the `resource` is not one this server issues tokens for, or differs from the grant's. */
export const InvalidTarget = kind('invalid_target');
export const AccessDenied = kind('access_denied', 403);
/** The spec's code for a redirect_uri that differs from the registered one (sent to the registered URI). */
export const InvalidRedirectUri = kind('invalid_redirect_uri');

/** RFC 6749 §5.2: 401, and a WWW-Authenticate challenge for clients that can use HTTP Basic. */
export class InvalidClient extends OAuthError {
  constructor(description: string) {
    super('invalid_client', description, 401, true, { 'WWW-Authenticate': 'Basic realm="docsearch", charset="UTF-8"' });
  }
}

/** A per-address rate limit was reached: 429 with Retry-After (whole seconds). */
export class TooManyRequests extends OAuthError {
  constructor(what: string, waitMs: number) {
    const seconds = Math.ceil(waitMs / 1000);
    super('too_many_requests', `${what}; try again in ${seconds} s`, 429, true, { 'Retry-After': String(seconds) });
  }
}

export class ServerError extends OAuthError {
  constructor(cause: unknown) {
    super('server_error', 'the authorization server hit an internal error', 500, false, {}, cause);
  }
}

export function isOAuthError(err: unknown): err is OAuthError {
  return err instanceof OAuthError;
}

/** Anything thrown becomes an OAuthError; unknown errors are an unexposed server_error. */
export function toOAuthError(err: unknown): OAuthError {
  return isOAuthError(err) ? err : new ServerError(err);
}

/** RFC 6749 §5.2 body (also the query parameters of an authorize error redirect). */
export function toOAuthWire(err: OAuthError): { error: string; error_description: string } {
  return { error: err.error, error_description: err.expose ? err.description : 'internal server error' };
}
