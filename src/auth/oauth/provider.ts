import type { AuditLog } from '../../core/audit.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { LoginAttemptStore } from '../../store/sql/login-attempts.js';
import type { OAuthClientRecord } from '../../store/sql/oauth-clients.js';
import type { OAuthStoreSet } from '../../store/sql/oauth-transaction.js';
import type { ConnectedApp } from '../../store/sql/oauth-tokens.js';
import type { BearerResolver } from '../principal.js';
import { type AuthorizeOutcome, validateAuthorizeRequest } from './authorize/index.js';
import type { AuthorizationRequest } from './authorize/request.js';
import { ClientMetadataFetcher } from './client-metadata-fetch.js';
import { appTarget, ClientService } from './clients.js';
import { issueAuthorizationCode } from './codes.js';
import { AccessDenied, type OAuthError, ServerError, toOAuthWire } from './errors.js';
import { USED_CODE_RETENTION_MS } from './lifetimes.js';
import type { RegistrationPolicy } from './metadata.js';
import { handleRegistrationRequest, SELF_REGISTERED_UNUSED_TTL_MS, takeRegistrationSlot } from './registration.js';
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
export interface OAuthProviderOptions {
  /** The daemon's public URL (known once it listens): issuer, and the name of its resources (RFC 8707). */
  publicUrl: () => string;
  /** Self-registration policy (RFC 7591, client ID metadata documents); default off. */
  registration?: RegistrationPolicy;
  /** Let client metadata documents be fetched from loopback and private addresses. */
  metadataAllowPrivate?: boolean;
  /** Counters for the registration rate limit (the login throttle's store); required unless registration is off. */
  attempts?: LoginAttemptStore;
  /** Where registrations, consents and revocations are recorded. */
  audit: AuditLog;
  /** Where an approval that failed inside is logged (the browser is sent server_error, without the cause). */
  log?: Logger;
}

export class OAuthProvider {
  readonly clients: ClientService;
  /** BearerResolver for OAuth access tokens (src/server/middleware/bearer.ts). */
  readonly resolveAccessToken: BearerResolver;

  constructor(
    private readonly stores: OAuthStoreSet,
    private readonly now: Clock,
    private readonly opts: OAuthProviderOptions,
  ) {
    const policy = opts.registration ?? 'off';
    if (policy !== 'off' && !opts.attempts) throw new Error('client registration needs the attempt counters for its rate limit');
    const documents = policy === 'off' ? null : new ClientMetadataFetcher({ allowPrivate: !!opts.metadataAllowPrivate, now });
    this.clients = new ClientService(stores.clients, now, opts.audit, { policy, documents, takeSlot: (clientIp) => this.takeRegistrationSlot(clientIp) });
    this.resolveAccessToken = accessTokenResolver(stores.tokens, now);
  }

  get registrationPolicy(): RegistrationPolicy {
    return this.clients.registrationPolicy;
  }

  /** Runs the authorize checks on the request's parameters (query or consent form), sent from `clientIp`. */
  validateAuthorize(params: unknown, clientIp: string): Promise<AuthorizeOutcome> {
    return validateAuthorizeRequest(this.clients, this.opts.publicUrl(), params, clientIp);
  }

  /**
   * Whether this user may authorize the client: a client that registered itself with an account's credential
   * (policy `users`) is that account's alone; any other client, any signed-in user.
   */
  mayAuthorize(client: OAuthClientRecord, userId: string): boolean {
    return client.registration !== 'dynamic' || client.userId === null || client.userId === userId;
  }

  /** Counts a registration attempt from this address: 0 when it may go on, else the milliseconds to wait. */
  takeRegistrationSlot(clientIp: string): Promise<number> {
    return takeRegistrationSlot(this.opts.attempts!, clientIp);
  }

  /** POST /api/oauth/register (RFC 7591), once the policy and the rate limit let it through. */
  register(body: unknown, ownerUserId: string | null) {
    return handleRegistrationRequest(this.clients, body, ownerUserId);
  }

  /**
   * The user approved: a fresh code, and where to send the browser. A failure inside sends it back with
   * server_error (the spec's code; RFC 6749 §4.1.2.1: a 500 cannot reach the client through a redirect), to the
   * redirect URI the success would have gone to.
   */
  async approve(req: AuthorizationRequest, userId: string): Promise<string> {
    try {
      await this.clients.record(req.client);
      const code = await issueAuthorizationCode(this.stores.codes, this.now(), req, userId);
      await this.opts.audit.record({ type: 'oauth.consented', target: appTarget(req.client), details: { scopes: req.scopes, resource: req.resource, registration: req.client.registration } });
      return withQuery(req.redirectUri, { code, state: req.state });
    } catch (err) {
      this.opts.log?.error({ err, client_id: req.client.id }, 'issuing an authorization code failed');
      return this.errorRedirect(new ServerError(err), req.redirectUri, req.state);
    }
  }

  deny(req: AuthorizationRequest): string {
    return this.errorRedirect(new AccessDenied('the user denied the request'), req.redirectUri, req.state);
  }

  /** An error redirect (RFC 6749 §4.1.2.1): error, error_description and the original state. */
  errorRedirect(error: OAuthError, redirectUri: string, state: string | undefined): string {
    return withQuery(redirectUri, { ...toOAuthWire(error), state });
  }

  token(body: unknown, authorization: string | undefined, clientIp: string): Promise<TokenResponse> {
    return handleTokenRequest({ clients: this.clients, stores: this.stores, now: this.now, publicUrl: this.opts.publicUrl() }, body, authorization, clientIp);
  }

  revoke(body: unknown, authorization: string | undefined, clientIp: string): Promise<void> {
    return handleRevokeRequest({ clients: this.clients, stores: this.stores, now: this.now }, body, authorization, clientIp);
  }

  /** Settings → Connected apps. */
  connectedApps(userId: string): Promise<ConnectedApp[]> {
    return this.stores.tokens.listConnected(userId, this.now());
  }

  /**
   * Revokes everything a user granted one application; the number of grants revoked. The codes it holds unexchanged
   * go first: one exchanged after the revocation would be a new grant, and the app must be allowed again.
   */
  async revokeConnected(userId: string, clientId: string): Promise<number> {
    await this.stores.codes.deleteUnused(userId, clientId);
    const grants = await this.stores.tokens.revokeUserClient(userId, clientId, this.now());
    if (grants > 0) await this.opts.audit.record({ type: 'oauth.revoked', target: { type: 'oauth_app', id: clientId }, details: { grants } });
    return grants;
  }

  /** Drops expired tokens, long-expired codes and unused self-registered clients (hourly, from the daemon). */
  async purgeExpired(): Promise<void> {
    const now = this.now();
    await this.stores.tokens.purgeExpired(now);
    await this.stores.codes.purgeExpired(now - USED_CODE_RETENTION_MS);
    await this.stores.clients.purgeUnusedSelfRegistered(now - SELF_REGISTERED_UNUSED_TTL_MS, now);
  }
}
