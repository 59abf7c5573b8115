import { SCOPES } from '../scopes.js';
import { GRANTS } from './grants/index.js';

export const AUTHORIZE_PATH = '/api/oauth/authorize';
export const TOKEN_PATH = '/api/oauth/token';
export const REVOKE_PATH = '/api/oauth/revoke';
export const REGISTER_PATH = '/api/oauth/register';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';
/** RFC 9728 §3: a resource's metadata lives at this well-known path followed by the resource's own path. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Where the daemon serves the Model Context Protocol (Streamable HTTP). One definition for both sides. */
export const MCP_PATH = '/mcp';

const AUTH_METHODS = ['client_secret_post', 'client_secret_basic', 'none'];

/**
 * Who may register clients without the operator: `open` (anyone, RFC 7591 and client ID metadata documents),
 * `users` (RFC 7591 only with a credential of an account here; metadata documents still accepted), `off`.
 */
export type RegistrationPolicy = 'open' | 'users' | 'off';
export const REGISTRATION_POLICIES: readonly RegistrationPolicy[] = ['open', 'users', 'off'];

/** Authorization server metadata (RFC 8414 §2); `issuer` is the daemon's public URL. */
export function serverMetadata(issuer: string, registration: RegistrationPolicy) {
  return {
    issuer,
    authorization_endpoint: issuer + AUTHORIZE_PATH,
    token_endpoint: issuer + TOKEN_PATH,
    revocation_endpoint: issuer + REVOKE_PATH,
    ...(registration !== 'off' ? { registration_endpoint: issuer + REGISTER_PATH } : {}),
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANTS.keys()],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    // draft-ietf-oauth-client-id-metadata-document (MCP 2025-11-25): an https client_id URL is fetched as the client's metadata.
    ...(registration !== 'off' ? { client_id_metadata_document_supported: true } : {}),
  };
}

/**
 * The URL of /mcp's protected resource metadata (RFC 9728), for `WWW-Authenticate: Bearer resource_metadata="…"`.
 * Like the RFC 8414 document, it is served relative to the daemon's root, under the public URL.
 */
export function protectedResourceMetadataUrl(publicUrl: string): string {
  return publicUrl + PROTECTED_RESOURCE_METADATA_PATH + MCP_PATH;
}

/** Protected resource metadata (RFC 9728 §2) for one of the daemon's resources; this server is its own authorization server. */
export function protectedResourceMetadata(publicUrl: string, resource: string) {
  return {
    resource,
    authorization_servers: [publicUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'docsearch',
  };
}
