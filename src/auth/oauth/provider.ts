import type { Clock } from '../../core/clock.js';
import type { OAuthStoreSet } from '../../store/sql/oauth-transaction.js';
import type { ConnectedApp } from '../../store/sql/oauth-tokens.js';
import type { BearerResolver } from '../principal.js';
import { type AuthorizeOutcome, validateAuthorizeRequest } from './authorize/index.js';
import type { AuthorizationRequest } from './authorize/request.js';
import { ClientService } from './clients.js';
import { issueAuthorizationCode } from './codes.js';
import { AccessDenied, type OAuthError, toOAuthWire } from './errors.js';
import { USED_CODE_RETENTION_MS } from './lifetimes.js';
import { withQuery } from './redirect-uri.js';
import { handleRevokeRequest } from './revoke-endpoint.js';
import { handleTokenRequest } from './token-endpoint.js';
import { accessTokenResolver, type TokenResponse } from './tokens.js';

/**
 * The OAuth 2.0 authorization server's protocol side, behind one small interaction API for the
 * HTTP layer (src/server/oauth/, src/server/web/consent.ts), which never sees codes' or tokens'
 * storage, and which renders every HTML page itself.
 *
 * Written by hand rather than on @node-oauth/oauth2-server (v5): its token handler refuses any
 * body that is not application/x-www-form-urlencoded (the spec's token request is JSON), it has
 * no `invalid_redirect_uri` and answers a mismatched redirect_uri with invalid_client instead of
 * a redirect to the registered URI, a second use of a code does not revoke the tokens issued
 * from it, rotated refresh tokens are not detected on reuse, and PKCE `plain` is accepted. Each
 * of those is a spec or RFC 9700 requirement here, and each is tested in test/auth/.
 */
export class OAuthProvider {
  readonly clients: ClientService;
  /** BearerResolver for OAuth access tokens (src/server/middleware/bearer.ts). */
  readonly resolveAccessToken: BearerResolver;

  constructor(
    private readonly stores: OAuthStoreSet,
    private readonly now: Clock,
  ) {
    this.clients = new ClientService(stores.clients, now);
    this.resolveAccessToken = accessTokenResolver(stores.tokens, now);
  }

  /** Runs the authorize checks on the request's parameters (query or consent form). */
  validateAuthorize(params: unknown): Promise<AuthorizeOutcome> {
    return validateAuthorizeRequest(this.clients, params);
  }

  /** The user approved: a fresh code, and where to send the browser. */
  async approve(req: AuthorizationRequest, userId: string): Promise<string> {
    const code = await issueAuthorizationCode(this.stores.codes, this.now(), req, userId);
    return withQuery(req.redirectUri, { code, state: req.state });
  }

  deny(req: AuthorizationRequest): string {
    return this.errorRedirect(new AccessDenied('the user denied the request'), req.redirectUri, req.state);
  }

  /** An error redirect (RFC 6749 §4.1.2.1): error, error_description and the original state. */
  errorRedirect(error: OAuthError, redirectUri: string, state: string | undefined): string {
    return withQuery(redirectUri, { ...toOAuthWire(error), state });
  }

  token(body: unknown, authorization: string | undefined): Promise<TokenResponse> {
    return handleTokenRequest({ clients: this.clients, stores: this.stores, now: this.now }, body, authorization);
  }

  revoke(body: unknown, authorization: string | undefined): Promise<void> {
    return handleRevokeRequest({ clients: this.clients, stores: this.stores, now: this.now }, body, authorization);
  }

  /** Settings → Connected apps. */
  connectedApps(userId: string): Promise<ConnectedApp[]> {
    return this.stores.tokens.listConnected(userId, this.now());
  }

  /** Revokes everything a user granted one application; the number of grants revoked. */
  revokeConnected(userId: string, clientId: string): Promise<number> {
    return this.stores.tokens.revokeUserClient(userId, clientId, this.now());
  }

  /** Drops expired tokens and long-expired codes (hourly, from the daemon). */
  async purgeExpired(): Promise<void> {
    const now = this.now();
    await this.stores.tokens.purgeExpired(now);
    await this.stores.codes.purgeExpired(now - USED_CODE_RETENTION_MS);
  }
}
