import { sha256Hex } from '../../../core/secrets.js';
import { parseGrantScopes } from '../../scopes.js';
import { InvalidGrant, InvalidRequest, InvalidScope, InvalidTarget } from '../errors.js';
import { issueTokenPair, looksLikeOAuthToken } from '../tokens.js';
import type { Grant } from './grant.js';

/**
 * refresh_token (RFC 6749 §6, RFC 9700 §4.14.2). Rules, in order:
 * - refresh_token is present (invalid_request), a live refresh token of this client (invalid_grant);
 * - refresh tokens rotate: each use consumes the token and returns a new pair under the same grant;
 * - presenting a rotated (already used) refresh token revokes the whole grant — either the client
 *   or an attacker holds a stolen copy, and we cannot tell which (the transaction holds the token's row, so
 *   the same token presented on two replicas at once rotates once and the other counts as reuse);
 * - an optional scope narrows the new access token (invalid_scope when it asks for more); the new
 *   refresh token keeps the presented one's scope;
 * - the new pair keeps the grant's resource (RFC 8707); a `resource`, when sent, must equal it (invalid_target).
 */
export const refreshTokenGrant: Grant = {
  grantType: 'refresh_token',
  parameters: new Set(['refresh_token', 'scope']),
  async handler({ params, client, stores, now, resource, describeResource }) {
    const presented = params.refresh_token;
    if (presented === undefined) return new InvalidRequest('missing required parameter: refresh_token');
    if (!looksLikeOAuthToken(presented)) return new InvalidGrant('refresh token is invalid');
    const tokenHash = sha256Hex(presented);

    return stores.transaction(async (tx) => {
      const token = await tx.tokens.find(tokenHash, { forUpdate: true });
      if (!token || token.kind !== 'refresh') return new InvalidGrant('refresh token is invalid');
      if (token.clientId !== client.id) return new InvalidGrant('refresh token was issued to another client');
      const at = now();
      if (token.grantRevokedAt !== null || token.revokedAt !== null) return new InvalidGrant('refresh token has been revoked');
      if (token.usedAt !== null) {
        await tx.tokens.revokeGrant(token.grantId, at);
        return new InvalidGrant('refresh token has already been used; the grant is revoked');
      }
      if (token.expiresAt <= at) return new InvalidGrant('refresh token has expired');

      if (resource !== undefined && resource !== token.resource) {
        return new InvalidTarget(`resource ${describeResource(resource)} differs from the grant's (${describeResource(token.resource)})`);
      }

      let scopes = token.scopes;
      if (params.scope !== undefined && params.scope.trim()) {
        const asked = parseGrantScopes(params.scope, client.id);
        const extra = [...asked.unknown, ...asked.scopes.filter((s) => !token.scopes.includes(s))];
        if (extra.length > 0) return new InvalidScope(`scope exceeds the grant: ${extra.join(' ')}`);
        scopes = asked.scopes;
      }
      if (!(await tx.tokens.markUsed(tokenHash, at))) return new InvalidGrant('refresh token has already been used');
      return issueTokenPair(tx.tokens, at, { grantId: token.grantId, clientId: client.id, userId: token.userId, scopes, refreshScopes: token.scopes, resource: token.resource });
    });
  },
};
