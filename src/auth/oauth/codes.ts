import { randomBase62, sha256Hex } from '../../core/secrets.js';
import type { OAuthCodeStore } from '../../store/sql/oauth-codes.js';
import type { AuthorizationRequest } from './authorize/request.js';
import { CODE_TTL_MS } from './lifetimes.js';

export const CODE_LENGTH = 64;

/**
 * Issues the authorization code for an approved request: 64 base62 characters (≈ 381 bits),
 * valid 10 minutes, bound to client, redirect_uri, user, scopes, PKCE challenge and resource. Only its
 * SHA-256 is stored.
 */
export async function issueAuthorizationCode(store: OAuthCodeStore, now: number, req: AuthorizationRequest, userId: string): Promise<string> {
  const code = randomBase62(CODE_LENGTH);
  await store.create({
    codeHash: sha256Hex(code),
    clientId: req.client.id,
    userId,
    redirectUri: req.redirectUri,
    scopes: req.scopes,
    codeChallenge: req.codeChallenge,
    resource: req.resource,
    createdAt: now,
    expiresAt: now + CODE_TTL_MS,
  });
  return code;
}
