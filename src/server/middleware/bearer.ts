import type { Middleware } from 'koa';
import type { BearerResolver, Principal } from '../../auth/principal.js';
import type { GrantScope, Scope } from '../../auth/scopes.js';
import { actingAs } from '../../core/audit.js';
import { AppError } from '../../core/errors.js';
import type { AppState } from '../state.js';

const REALM = 'docsearch';

/** Why a credential of this kind may not call a route limited to other kinds. */
const KIND_REFUSED: Record<Principal['kind'], string> = {
  // Keys are the user's own credentials, by default never expiring: an app must not mint one that outlives its revocation.
  oauth: 'API keys are managed with an API key or in Settings → API keys, not with an application’s access token',
  api_key: 'this route does not accept API keys',
};

export function unauthorized(message: string, withError: boolean): AppError {
  // RFC 6750 §3.1: a request without credentials gets the challenge but no error code.
  const challenge = withError
    ? `Bearer realm="${REALM}", error="invalid_token", error_description="${message}"`
    : `Bearer realm="${REALM}"`;
  return new AppError('unauthorized', message, { headers: { 'WWW-Authenticate': challenge } });
}

/** Why a credential is refused (RFC 6750 §3.1: `withError` false for a request that sent none), or its principal. */
export type BearerOutcome = { ok: true; principal: Principal } | { ok: false; message: string; withError: boolean };

/**
 * Resolves `Authorization: Bearer <api key | access token>` for one resource (RFC 8707) by asking each resolver
 * in turn: `resource` null is the REST API, `mcpResource(publicUrl)` the MCP endpoint. API keys work at both; an
 * OAuth access token only at the resource it is bound to — a token an MCP client holds must not work on the
 * whole API. Tokens issued without `resource` are the REST API's, as they always were.
 */
export async function resolveBearer(resolvers: readonly BearerResolver[], header: string | undefined, resource: string | null = null): Promise<BearerOutcome> {
  if (!header) return { ok: false, message: 'missing credentials: send Authorization: Bearer <API key or access token>', withError: false };
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(header);
  if (!match) return { ok: false, message: 'malformed Authorization header: expected "Bearer <token>"', withError: true };
  const credential = match[1]!;
  for (const resolve of resolvers) {
    const principal = await resolve(credential);
    if (!principal) continue;
    if ('refused' in principal) return { ok: false, message: principal.refused, withError: true };
    if (principal.kind !== 'api_key' && principal.resource !== resource) {
      return { ok: false, message: `this access token was issued for another resource (${principal.resource ?? 'the REST API'})`, withError: true };
    }
    actingAs({ id: principal.userId }, principal.kind, principal.credentialId);
    return { ok: true, principal };
  }
  return { ok: false, message: 'the credential is not valid, has expired or was revoked', withError: true };
}

/**
 * Authenticates `Authorization: Bearer <api key | access token>` (resolveBearer), then enforces the route's credential kinds (an OAuth token holding `tokensWith` counts as an accepted kind) and scope. A failing credential is a 401 with WWW-Authenticate;
 * a valid one without the scope is a 403 insufficient_scope.
 */
export function bearer(resolvers: readonly BearerResolver[], scope: Scope | 'authenticated', kinds?: readonly Principal['kind'][], tokensWith?: GrantScope): Middleware<AppState> {
  return async (ctx, next) => {
    const outcome = await resolveBearer(resolvers, ctx.get('authorization') || undefined);
    if (!outcome.ok) throw unauthorized(outcome.message, outcome.withError);
    const principal = outcome.principal;
    const tokenAllowed = principal.kind === 'oauth' && tokensWith !== undefined && principal.scopes.includes(tokensWith);
    if (kinds && !kinds.includes(principal.kind) && !tokenAllowed) {
      throw new AppError('insufficient_scope', KIND_REFUSED[principal.kind], { details: { credential_kind: principal.kind, accepted: kinds } });
    }
    if (scope !== 'authenticated' && !principal.scopes.includes(scope)) {
      throw new AppError('insufficient_scope', `this credential lacks the ${scope} scope`, {
        headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
        details: { required_scope: scope, granted_scopes: principal.scopes },
      });
    }
    ctx.state.principal = principal;
    await next();
  };
}
