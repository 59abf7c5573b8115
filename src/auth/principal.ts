import type { GrantScope } from './scopes.js';

/** Who is calling an /api/v1 route and what they may do. */
export interface Principal {
  userId: string;
  /** An API key's document scopes, or what an OAuth grant holds (the CLI's may include manage:keys). */
  scopes: GrantScope[];
  kind: 'api_key' | 'oauth';
  credentialId: string;
  /** When the credential stops being valid (ms): an OAuth token's end, an API key's expiry; absent: never. */
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

/** A credential of the resolver's kind that it knows but refuses, and why: said to the caller, who holds it. */
export interface CredentialRefused {
  refused: string;
}

/**
 * A bearer resolver turns a presented credential into a principal, or null when the credential
 * is not one of its kind or not valid (or a refusal whose reason the holder may be told). The bearer middleware
 * asks each resolver in turn, so OAuth access tokens plug in beside API keys without touching the middleware.
 */
export type BearerResolver = (credential: string) => Promise<Principal | CredentialRefused | null>;
