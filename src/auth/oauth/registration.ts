import type { LoginAttemptStore, ThrottlePolicy } from '../../store/sql/login-attempts.js';
import type { OAuthClientRecord } from '../../store/sql/oauth-clients.js';
import { ClientMetadataProblem, readClientMetadata, SUPPORTED_GRANT_TYPES } from './client-metadata.js';
import type { ClientService } from './clients.js';
import { OAuthError } from './errors.js';
import { SCOPES } from '../scopes.js';

/**
 * Dynamic Client Registration (RFC 7591), protocol part. Why it is open by default (`--client-registration
 * open`): MCP clients register themselves with every server they are pointed at, and registration alone grants
 * nothing — every grant still needs a signed-in user's consent, and the consent page says the client registered
 * itself and that docsearch has not verified it. Registration is rate limited per client address, and a
 * self-registered client that holds no live grant is deleted 30 days after it registered.
 */

/** RFC 7591 §3.2.2 errors: `invalid_redirect_uri` or `invalid_client_metadata`, 400. */
export class RegistrationError extends OAuthError {
  constructor(error: 'invalid_redirect_uri' | 'invalid_client_metadata', description: string) {
    super(error, description, 400);
  }
}

/** Registrations per client address: 20 an hour; the 20th locks the address for an hour. */
export const REGISTRATION_THROTTLE: ThrottlePolicy = { maxFailures: 20, windowMs: 3600_000, lockMs: 3600_000 };
export const SELF_REGISTERED_UNUSED_TTL_MS = 30 * 24 * 3600_000;

/** Counts a registration from `clientIp` (the login throttle's counters, keyed apart): 0, or ms to wait. */
export function takeRegistrationSlot(attempts: LoginAttemptStore, clientIp: string): Promise<number> {
  return attempts.take([`register:ip:${clientIp}`], REGISTRATION_THROTTLE);
}

/** RFC 7591 §3.2.1 response: the client's id (and secret, once) and the metadata as registered. */
export function registrationResponse(client: OAuthClientRecord, secret: string | null) {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_name: client.name,
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.isPublic ? 'none' : 'client_secret_basic',
    // What the server does for every client, whatever was asked for within it.
    grant_types: [...SUPPORTED_GRANT_TYPES],
    response_types: ['code'],
    scope: SCOPES.join(' '),
  };
}

/** Registers the client the request body describes; owned by `ownerUserId` when the policy required an account. */
export async function handleRegistrationRequest(clients: ClientService, body: unknown, ownerUserId: string | null) {
  let meta;
  try {
    meta = readClientMetadata(body, { echoValues: true });
  } catch (err) {
    if (err instanceof ClientMetadataProblem) throw new RegistrationError(err.redirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', err.message);
    throw err;
  }
  const { client, secret } = await clients.registerDynamic(meta, ownerUserId);
  const response = registrationResponse(client, secret);
  // client_secret_post and client_secret_basic both work at the token endpoint; say back the one asked for.
  if (!client.isPublic && meta.authMethod === 'client_secret_post') response.token_endpoint_auth_method = 'client_secret_post';
  return response;
}
