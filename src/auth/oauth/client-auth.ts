import type { OAuthClientRecord } from '../../store/sql/oauth-clients.js';
import type { ClientService } from './clients.js';
import { InvalidClient, InvalidRequest } from './errors.js';
import type { OAuthParams } from './params.js';

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3.1, §3.2.1):
 * - `client_secret_basic` (Authorization: Basic, id and secret form-urlencoded) or
 *   `client_secret_post` (client_id + client_secret in the body) for confidential clients;
 * - `none` (client_id only) for public clients, which prove possession with PKCE instead;
 * - only one method per request; a Basic client_id must agree with a body client_id;
 * - every failure is invalid_client (401), whatever the reason, with the reason in the description.
 */
function fromBasic(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidClient('malformed HTTP Basic client credentials');
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw new InvalidClient('malformed HTTP Basic client credentials');
  }
}

/** `clientIp`: the caller's address, which fetching a metadata document not yet recorded counts on. */
export async function authenticateClient(clients: ClientService, authorization: string | undefined, params: OAuthParams, clientIp: string): Promise<OAuthClientRecord> {
  let clientId = params.client_id;
  let secret = params.client_secret;
  if (authorization && /^Basic\s/i.test(authorization)) {
    if (secret !== undefined) throw new InvalidRequest('use one client authentication method: HTTP Basic or client_secret in the body, not both');
    const basic = fromBasic(authorization);
    if (clientId !== undefined && clientId !== basic.clientId) throw new InvalidRequest('client_id in the body differs from the HTTP Basic client_id');
    clientId = basic.clientId;
    secret = basic.clientSecret || undefined;
  }
  if (clientId === undefined) throw new InvalidClient('client authentication failed: no client_id was sent');
  const client = await clients.resolve(clientId, clientIp);
  if (!client) throw new InvalidClient('client authentication failed: unknown client_id');
  if (client.isPublic) {
    if (secret !== undefined) throw new InvalidClient('client authentication failed: this public client has no secret');
    return client;
  }
  if (secret === undefined) throw new InvalidClient('client authentication failed: client_secret is required');
  if (!clients.secretMatches(client, secret)) throw new InvalidClient('client authentication failed: client_secret is incorrect');
  return client;
}
