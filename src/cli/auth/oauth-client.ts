/**
 * The CLI's OAuth 2.0 client, written as request/process pairs in the style of oauth4webapi:
 * `xRequest()` sends and returns the raw Response, `processXResponse()` checks it and returns typed data.
 * Public client with PKCE S256 (RFC 7636) and a loopback redirect (RFC 8252 §7.3).
 */
import { createHash, randomBytes } from 'node:crypto';
import { boundedText, TooLongAnswer } from '../bounded-answer.js';

/** The built-in public client every docsearch server registers for this CLI. */
export const CLI_CLIENT_ID = 'docsearch-cli';
/** Lets the CLI list, create and revoke API keys; the server grants it to this client only. */
export const KEYS_SCOPE = 'manage:keys';
/** The documents, and key management (`manage:keys`, a scope only this built-in client may ask for). */
export const DEFAULT_SCOPE = 'read:documents write:documents manage:keys';

export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
}

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

/** Codes callers branch on; never branch on the message. */
export const RESPONSE_IS_NOT_CONFORM = 'OAUTH_RESPONSE_IS_NOT_CONFORM';
export const RESPONSE_BODY_ERROR = 'OAUTH_RESPONSE_BODY_ERROR';
export const STATE_MISMATCH = 'OAUTH_STATE_MISMATCH';
export const AUTHORIZATION_ERROR = 'OAUTH_AUTHORIZATION_ERROR';

export class OAuthClientError extends Error {
  override name = 'OAuthClientError';
  constructor(
    message: string,
    readonly code: string,
    /** The RFC 6749 `error` from the server, when there was one. */
    readonly error?: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

function assertString(value: unknown, label: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) throw new OAuthClientError(`${label} must be a non-empty string`, RESPONSE_IS_NOT_CONFORM);
}

async function readJson(res: Response, what: string): Promise<Record<string, unknown>> {
  // An endless answer is no JSON object: said as one (below), not read until memory runs out.
  const text = await boundedText(res).catch((err: unknown) => {
    if (err instanceof TooLongAnswer) return '';
    throw err;
  });
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new OAuthClientError(`"response" body of ${what} must be a JSON object (HTTP ${res.status})`, RESPONSE_IS_NOT_CONFORM, undefined, res.status);
}

/** An RFC 6749 §5.2 error body, or the API's `{error:{code,message}}` shape, as an OAuthClientError. */
async function bodyError(res: Response, what: string): Promise<OAuthClientError> {
  const body = await readJson(res, what).catch(() => ({}) as Record<string, unknown>);
  const nested = typeof body.error === 'object' && body.error ? (body.error as { code?: string; message?: string }) : undefined;
  const error = nested?.code ?? (typeof body.error === 'string' ? body.error : undefined);
  const description = nested?.message ?? (typeof body.error_description === 'string' ? body.error_description : undefined);
  return new OAuthClientError(`${what} failed: ${[error, description].filter(Boolean).join(': ') || `HTTP ${res.status}`}`, RESPONSE_BODY_ERROR, error, res.status);
}

// ── discovery (RFC 8414) ─────────────────────────────────────────────────────────────────────

export function discoveryRequest(issuer: string, opts: RequestOptions = {}): Promise<Response> {
  return (opts.fetch ?? fetch)(`${issuer}/.well-known/oauth-authorization-server`, { headers: { accept: 'application/json' }, signal: opts.signal });
}

/**
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-3.2
 * The endpoints must be on the issuer's origin: a metadata document must not send the code elsewhere.
 */
export async function processDiscoveryResponse(issuer: string, res: Response): Promise<ServerMetadata> {
  if (!res.ok) throw await bodyError(res, 'authorization server metadata');
  const body = await readJson(res, 'authorization server metadata');
  assertString(body.authorization_endpoint, '"response" body "authorization_endpoint" property');
  assertString(body.token_endpoint, '"response" body "token_endpoint" property');
  const origin = new URL(issuer).origin;
  for (const key of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const) {
    const value = body[key];
    if (value !== undefined && (typeof value !== 'string' || new URL(value, issuer).origin !== origin)) {
      throw new OAuthClientError(`"response" body "${key}" property must be a URL on ${origin}`, RESPONSE_IS_NOT_CONFORM);
    }
  }
  return {
    issuer,
    authorization_endpoint: new URL(body.authorization_endpoint, issuer).toString(),
    token_endpoint: new URL(body.token_endpoint, issuer).toString(),
    ...(typeof body.revocation_endpoint === 'string' ? { revocation_endpoint: new URL(body.revocation_endpoint, issuer).toString() } : {}),
  };
}

// ── authorization request (RFC 6749 §4.1.1, RFC 7636) ────────────────────────────────────────

export interface Pkce {
  verifier: string;
  challenge: string;
}

/** 32 random bytes → a 43-char verifier; challenge = BASE64URL(SHA256(verifier)) (S256 only). */
export function generatePkce(random: (n: number) => Buffer = randomBytes): Pkce {
  const verifier = random(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const generateState = (random: (n: number) => Buffer = randomBytes): string => random(16).toString('base64url');

export function authorizationUrl(meta: ServerMetadata, p: { clientId: string; redirectUri: string; state: string; codeChallenge: string; scope?: string }): string {
  const u = new URL(meta.authorization_endpoint);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', p.clientId);
  u.searchParams.set('redirect_uri', p.redirectUri);
  u.searchParams.set('state', p.state);
  u.searchParams.set('code_challenge', p.codeChallenge);
  u.searchParams.set('code_challenge_method', 'S256');
  if (p.scope) u.searchParams.set('scope', p.scope);
  return u.toString();
}

/**
 * Checks the redirect's query: `state` must match what we sent (CSRF, RFC 6749 §10.12), and an
 * `error` is surfaced with its description. Returns the authorization code.
 */
export function validateAuthorizationResponse(params: URLSearchParams, expectedState: string): string {
  const state = params.get('state');
  if (state !== expectedState) throw new OAuthClientError('the redirect\'s "state" does not match this login attempt', STATE_MISMATCH);
  const error = params.get('error');
  if (error) {
    const description = params.get('error_description');
    throw new OAuthClientError(`authorization failed: ${error}${description ? `: ${description}` : ''}`, AUTHORIZATION_ERROR, error);
  }
  const code = params.get('code');
  assertString(code, '"redirect" query "code" parameter');
  return code;
}

// ── token endpoint (RFC 6749 §4.1.3, §6) ─────────────────────────────────────────────────────

function tokenEndpointRequest(meta: ServerMetadata, params: Record<string, string>, opts: RequestOptions): Promise<Response> {
  return (opts.fetch ?? fetch)(meta.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params).toString(),
    signal: opts.signal,
  });
}

export function authorizationCodeGrantRequest(
  meta: ServerMetadata,
  p: { clientId: string; code: string; redirectUri: string; codeVerifier: string },
  opts: RequestOptions = {},
): Promise<Response> {
  return tokenEndpointRequest(meta, { grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri, client_id: p.clientId, code_verifier: p.codeVerifier }, opts);
}

export function refreshTokenGrantRequest(meta: ServerMetadata, p: { clientId: string; refreshToken: string }, opts: RequestOptions = {}): Promise<Response> {
  return tokenEndpointRequest(meta, { grant_type: 'refresh_token', refresh_token: p.refreshToken, client_id: p.clientId }, opts);
}

/** @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1 */
export async function processTokenResponse(res: Response): Promise<TokenSet> {
  if (!res.ok) throw await bodyError(res, 'token request');
  const body = await readJson(res, 'token request');
  assertString(body.access_token, '"response" body "access_token" property');
  if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer') {
    throw new OAuthClientError('"response" body "token_type" property must be "Bearer"', RESPONSE_IS_NOT_CONFORM);
  }
  if (typeof body.expires_in !== 'number' || !(body.expires_in > 0)) {
    throw new OAuthClientError('"response" body "expires_in" property must be a positive number', RESPONSE_IS_NOT_CONFORM);
  }
  if (body.refresh_token !== undefined) assertString(body.refresh_token, '"response" body "refresh_token" property');
  if (body.scope !== undefined && typeof body.scope !== 'string') throw new OAuthClientError('"response" body "scope" property must be a string', RESPONSE_IS_NOT_CONFORM);
  return {
    access_token: body.access_token,
    token_type: 'Bearer',
    expires_in: body.expires_in,
    ...(typeof body.refresh_token === 'string' ? { refresh_token: body.refresh_token } : {}),
    ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
  };
}

// ── revocation (RFC 7009) ────────────────────────────────────────────────────────────────────

export function revocationRequest(
  meta: ServerMetadata,
  p: { clientId: string; token: string; tokenTypeHint?: 'access_token' | 'refresh_token' },
  opts: RequestOptions = {},
): Promise<Response> {
  if (!meta.revocation_endpoint) throw new OAuthClientError('the server does not advertise a revocation endpoint', RESPONSE_IS_NOT_CONFORM);
  return tokenEndpointRequest(
    { ...meta, token_endpoint: meta.revocation_endpoint },
    { token: p.token, client_id: p.clientId, ...(p.tokenTypeHint ? { token_type_hint: p.tokenTypeHint } : {}) },
    opts,
  );
}

/** @see https://www.rfc-editor.org/rfc/rfc7009#section-2.2 — 200 whether or not the token was valid. */
export async function processRevocationResponse(res: Response): Promise<void> {
  if (!res.ok) throw await bodyError(res, 'revocation request');
  await res.body?.cancel();
}
