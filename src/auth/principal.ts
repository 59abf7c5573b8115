import type { Scope } from './scopes.js';

/** Who is calling an /api/v1 route and what they may do. */
export interface Principal {
  userId: string;
  scopes: Scope[];
  kind: 'api_key' | 'oauth';
  credentialId: string;
  /** For OAuth tokens: when the token stops being valid (ms). */
  expiresAt?: number;
}

/**
 * A bearer resolver turns a presented credential into a principal, or null when the credential
 * is not one of its kind or not valid. The bearer middleware asks each resolver in turn, so
 * OAuth access tokens plug in beside API keys without touching the middleware.
 */
export type BearerResolver = (credential: string) => Promise<Principal | null>;
