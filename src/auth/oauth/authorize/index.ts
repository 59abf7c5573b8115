import type { OAuthClientRecord } from '../../../store/sql/oauth-clients.js';
import type { ClientService } from '../clients.js';
import { type OAuthError, toOAuthError } from '../errors.js';
import { readParams } from '../params.js';
import { checkClient } from './check-client.js';
import { checkPkce } from './check-pkce.js';
import { checkRedirectUri } from './check-redirect-uri.js';
import { checkResource } from './check-resource.js';
import { checkResponseType } from './check-response-type.js';
import { checkScope } from './check-scope.js';
import type { AuthorizationRequest, AuthorizeCheck, AuthorizeContext } from './request.js';

/**
 * The authorize endpoint's checks, in order. Client and redirect URI come first: until both
 * are known good there is nowhere safe to send an error, so those failures render a page.
 */
const CHECKS: readonly AuthorizeCheck[] = [checkClient, checkRedirectUri, checkResponseType, checkScope, checkResource, checkPkce];

export const AUTHORIZE_PARAMETERS = new Set(['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource']);

export type AuthorizeOutcome =
  | { ok: true; request: AuthorizationRequest }
  /** redirectUri null: show the error to the user, never redirect. `client` is set once client_id named a registered one. */
  | { ok: false; error: OAuthError; redirectUri: string | null; state: string | undefined; client: OAuthClientRecord | null };

export async function validateAuthorizeRequest(clients: ClientService, publicUrl: string, input: unknown, clientIp: string): Promise<AuthorizeOutcome> {
  const raw = (input ?? {}) as Record<string, unknown>;
  // state is echoed exactly as received (a repeated state is a parameter error, shown as a page).
  const state = typeof raw.state === 'string' && raw.state !== '' ? raw.state : undefined;
  const ctx: AuthorizeContext = { params: {}, clients, publicUrl, clientIp };
  try {
    ctx.params = readParams(input, AUTHORIZE_PARAMETERS);
    for (const check of CHECKS) await check(ctx);
  } catch (err) {
    return { ok: false, error: toOAuthError(err), redirectUri: ctx.errorRedirectUri ?? null, state, client: ctx.client ?? null };
  }
  return {
    ok: true,
    request: { client: ctx.client!, redirectUri: ctx.redirectUri!, scopes: ctx.scopes!, codeChallenge: ctx.codeChallenge ?? null, state: ctx.params.state, resource: ctx.resource ?? null },
  };
}
