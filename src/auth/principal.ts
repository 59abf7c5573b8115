import type { GrantScope } from './scopes.js';

/** Who is calling an /api/v1 route and what they may do. */
export interface Principal {
  userId: string;
  /** An API key's document scopes, or what an OAuth grant holds (the CLI's may include manage:keys). */
  scopes: GrantScope[];
  kind: 'api_key' | 'oauth';
  credentialId: string;
  /** For OAuth tokens: when the token stops being valid (ms). */
  expiresAt?: number;
  /**
   * RFC 8707: what the credential may be used at. For an OAuth access token its bound resource —
   * `mcpResource(publicUrl)` for a token issued for /mcp, null for the REST API (also every token issued
   * without `resource`); null for API keys, which work wherever the REST API's do. Required, so that every
   * resolver decides it.
   */
  resource: string | null;
  /** An API key limited to these projects (the per-project key); null: every project its user may read. */
  projectLimit: string[] | null;
}

/**
 * A bearer resolver turns a presented credential into a principal, or null when the credential
 * is not one of its kind or not valid. The bearer middleware asks each resolver in turn, so
 * OAuth access tokens plug in beside API keys without touching the middleware.
 */
export type BearerResolver = (credential: string) => Promise<Principal | null>;
