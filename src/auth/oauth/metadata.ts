import { SCOPES } from '../scopes.js';
import { GRANTS } from './grants/index.js';

export const AUTHORIZE_PATH = '/api/oauth/authorize';
export const TOKEN_PATH = '/api/oauth/token';
export const REVOKE_PATH = '/api/oauth/revoke';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';

const AUTH_METHODS = ['client_secret_post', 'client_secret_basic', 'none'];

/** Authorization server metadata (RFC 8414 §2); `issuer` is the daemon's public URL. */
export function serverMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: issuer + AUTHORIZE_PATH,
    token_endpoint: issuer + TOKEN_PATH,
    revocation_endpoint: issuer + REVOKE_PATH,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANTS.keys()],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
  };
}
