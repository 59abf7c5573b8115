import type { Clock } from '../../core/clock.js';
import { sha256Hex } from '../../core/secrets.js';
import type { OAuthStoreSet } from '../../store/sql/oauth-transaction.js';
import { authenticateClient } from './client-auth.js';
import type { ClientService } from './clients.js';
import { readParams, requireParam } from './params.js';
import { looksLikeOAuthToken } from './tokens.js';

/**
 * POST /api/oauth/revoke (RFC 7009), protocol part. Rules:
 * - the client authenticates as at the token endpoint (public clients send their client_id);
 * - `token` is required; token_type_hint is optional and only a hint (we look the token up either way);
 * - an unknown, expired or already revoked token — or one issued to another client — is not an
 *   error: the response is 200 and nothing changes (§2.2), so the endpoint reveals nothing;
 * - revoking a refresh token revokes its whole grant, access tokens included (§2.1);
 *   revoking an access token revokes that token only.
 */
export async function handleRevokeRequest(
  deps: { clients: ClientService; stores: OAuthStoreSet; now: Clock },
  body: unknown,
  authorization: string | undefined,
  clientIp: string,
): Promise<void> {
  const params = readParams(body);
  const client = await authenticateClient(deps.clients, authorization, params, clientIp);
  const presented = requireParam(params, 'token');
  if (!looksLikeOAuthToken(presented)) return;
  const hash = sha256Hex(presented);
  const token = await deps.stores.tokens.find(hash);
  if (!token || token.clientId !== client.id) return;
  if (token.kind === 'refresh') await deps.stores.tokens.revokeGrant(token.grantId, deps.now());
  else await deps.stores.tokens.revokeToken(hash, deps.now());
}
