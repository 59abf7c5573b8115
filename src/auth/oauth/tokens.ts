import type { Clock } from '../../core/clock.js';
import { randomHex, sha256Hex } from '../../core/secrets.js';
import type { OAuthTokenStore } from '../../store/sql/oauth-tokens.js';
import type { Principal } from '../principal.js';
import type { GrantScope } from '../scopes.js';
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_MS } from './lifetimes.js';

/** The spec's token response, exactly these fields. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const TOKEN_FORMAT = /^[0-9a-f]{64}$/;

export const looksLikeOAuthToken = (value: string): boolean => TOKEN_FORMAT.test(value);

/**
 * Issues an access token (3600 s) and a refresh token (30 days) under a grant: 32 random bytes
 * each, as 64 lowercase hex chars; only their SHA-256 is stored. `refreshScopes` lets a narrowed
 * refresh keep the refresh token's own scope (RFC 6749 §6). Both carry the grant's resource (RFC 8707).
 */
export async function issueTokenPair(
  store: OAuthTokenStore,
  now: number,
  g: { grantId: string; clientId: string; userId: string; scopes: readonly string[]; refreshScopes?: readonly string[]; resource: string | null },
): Promise<TokenResponse> {
  const access = randomHex(32);
  const refresh = randomHex(32);
  const base = { grantId: g.grantId, clientId: g.clientId, userId: g.userId, createdAt: now, resource: g.resource };
  await store.insertToken({ ...base, tokenHash: sha256Hex(access), kind: 'access', scopes: [...g.scopes], expiresAt: now + ACCESS_TOKEN_TTL_S * 1000 });
  await store.insertToken({ ...base, tokenHash: sha256Hex(refresh), kind: 'refresh', scopes: [...(g.refreshScopes ?? g.scopes)], expiresAt: now + REFRESH_TOKEN_TTL_MS });
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: g.scopes.join(' ') };
}

/**
 * Bearer resolver for OAuth access tokens: valid while not expired, not revoked and its grant
 * not revoked. Anything else (including refresh tokens presented as bearer) resolves to null,
 * which the bearer middleware answers with 401 invalid_token.
 */
export function accessTokenResolver(store: OAuthTokenStore, now: Clock) {
  return async (credential: string): Promise<Principal | null> => {
    if (!looksLikeOAuthToken(credential)) return null;
    const token = await store.find(sha256Hex(credential));
    if (!token || token.kind !== 'access' || token.revokedAt !== null || token.grantRevokedAt !== null) return null;
    if (token.expiresAt <= now()) return null;
    return { userId: token.userId, scopes: token.scopes as GrantScope[], kind: 'oauth', credentialId: token.grantId, expiresAt: token.expiresAt, resource: token.resource, projectLimit: null };
  };
}
