import { networkError } from '../http.js';
import { discoveryRequest, processDiscoveryResponse, type ServerMetadata } from './oauth-client.js';

/**
 * Finds the server's OAuth endpoints (RFC 8414). A server without the metadata document (404)
 * gets the spec's fixed paths, which every docsearch server serves.
 */
export async function discover(server: string, fetchImpl: typeof fetch): Promise<ServerMetadata> {
  let res: Response;
  try {
    res = await discoveryRequest(server, { fetch: fetchImpl });
  } catch (err) {
    throw networkError(server, err);
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return {
      issuer: server,
      authorization_endpoint: `${server}/api/oauth/authorize`,
      token_endpoint: `${server}/api/oauth/token`,
      revocation_endpoint: `${server}/api/oauth/revoke`,
    };
  }
  return processDiscoveryResponse(server, res);
}
