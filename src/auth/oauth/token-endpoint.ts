import type { Clock } from '../../core/clock.js';
import type { OAuthStoreSet } from '../../store/sql/oauth-transaction.js';
import { authenticateClient } from './client-auth.js';
import type { ClientService } from './clients.js';
import { isOAuthError, UnsupportedGrantType } from './errors.js';
import { GRANTS } from './grants/index.js';
import { readParams, requireParam } from './params.js';
import { describeResource, resolveResource } from './resource.js';
import type { TokenResponse } from './tokens.js';

/**
 * POST /api/oauth/token, protocol part: grant_type is present and supported, the client
 * authenticates, then the grant's handler runs with only the parameters it declares
 * (oidc-provider's actions/token.js). Throws OAuthError; the HTTP layer renders it.
 */
export async function handleTokenRequest(
  deps: { clients: ClientService; stores: OAuthStoreSet; now: Clock; publicUrl: string },
  body: unknown,
  authorization: string | undefined,
  clientIp: string,
): Promise<TokenResponse> {
  const params = readParams(body);
  const grantType = requireParam(params, 'grant_type');
  const grant = GRANTS.get(grantType);
  if (!grant) throw new UnsupportedGrantType(`grant_type ${grantType} is not supported (supported: ${[...GRANTS.keys()].join(', ')})`);
  const client = await authenticateClient(deps.clients, authorization, params, clientIp);
  const own = Object.fromEntries(Object.entries(params).filter(([k]) => grant.parameters.has(k)));
  // RFC 8707 §2: an unknown resource is invalid_target whatever the grant (the grants compare known ones).
  const resource = params.resource === undefined ? undefined : resolveResource(params.resource, deps.publicUrl);
  const result = await grant.handler({
    params: own,
    client,
    stores: deps.stores,
    now: deps.now,
    resource,
    describeResource: (r) => describeResource(r, deps.publicUrl),
  });
  if (isOAuthError(result)) throw result;
  return result;
}
