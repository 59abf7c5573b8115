import type * as OpenIdClient from 'openid-client';
import { type Clock, systemClock } from '../../core/clock.js';
import { errorCauses } from '../../core/error-causes.js';
import { type ExternalIdentity, identityFromClaims, type ProviderSession } from './identity.js';
import type { OidcTransaction } from './transaction.js';

/**
 * OpenID Connect sign-in as a relying party, through openid-client (OpenID Certified): issuer discovery, the
 * Authorization Code flow with PKCE (S256), `state` and `nonce`, and the ID token's checks (issuer, audience,
 * expiry, nonce, authorized party) — none of it written here. What is ours: when to discover, which client
 * authentication, where the claims come from, and the words for what went wrong.
 */
export interface OidcSettings {
  /** `--oidc-issuer`: any https URL, private and loopback addresses included (a private CA via NODE_EXTRA_CA_CERTS). */
  issuer: string;
  clientId: string;
  /** Unset: a public client, PKCE alone. */
  clientSecret?: string | undefined;
  /** Space-separated; includes openid. */
  scopes: string;
  groupsClaim: string;
  /** <public-url>/login/sso/callback, as registered at the provider. */
  redirectUri: () => string;
}

/** Test seams: the clock the ID token's times are checked against, and the HTTP client that reaches the provider. */
export interface OidcSeams {
  now?: Clock;
  fetch?: typeof fetch;
  /** Seconds a request to the provider may take. */
  timeoutSeconds?: number;
}

/**
 * Why a sign-in did not complete: the provider could not be reached; its certificate is not one this server trusts (a
 * private CA not given to it, an expired or misnamed certificate: no retry helps); it refused or ended the sign-in (an
 * error in its answer, a code it would not exchange); its answer failed a check (state, nonce, issuer, audience,
 * signature); the ID token's times do not fit this server's clock (skew).
 */
export type SsoFailure = 'unreachable' | 'untrusted' | 'denied' | 'invalid' | 'clock';

/** Node's codes for a TLS certificate it would not accept (node:tls, OpenSSL's verify results). */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A failure to reach the provider, or — when a certificate was refused somewhere in its causes — an untrusted one. */
function unreachable(message: string, err: unknown): SsoError {
  for (const e of errorCauses(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CERTIFICATE_CODES.has(code)) {
      return new SsoError('untrusted', `${message}: the provider's certificate is not trusted (${code}): ${describe(err)}`, { cause: err });
    }
  }
  return new SsoError('unreachable', `${message}: ${describe(err)}`, { cause: err });
}

export class SsoError extends Error {
  override name = 'SsoError';
  constructor(
    readonly failure: SsoFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * openid-client, loaded on first use: ~8.6 MiB of resident memory and ~27 ms at start that a server without
 * `--oidc-issuer` never needs (the first start's memory is held to a bar: docs/BENCHMARKS.md).
 */
type Client = typeof OpenIdClient;
let loading: Promise<Client> | undefined;
const openIdClient = (): Promise<Client> => (loading ??= import('openid-client'));

/** The event a back-channel logout token carries (OpenID Connect Back-Channel Logout 1.0 §2.4). */
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export class OidcSignIn {
  /** The last discovered metadata: sign-in starts discover afresh (so a provider that is down is seen at once). */
  private server: OpenIdClient.ServerMetadata | null = null;
  /** The provider's signing keys, fetched when a logout token first needs them (and again for a key id not seen). */
  private jwks: ReturnType<typeof import('jose').createRemoteJWKSet> | undefined;
  private readonly now: Clock;

  constructor(
    readonly settings: OidcSettings,
    private readonly seams: OidcSeams = {},
  ) {
    this.now = seams.now ?? systemClock;
  }

  /** The provider's metadata, discovered now; SsoError('unreachable' or 'untrusted') when it cannot be had. */
  async discover(): Promise<OpenIdClient.ServerMetadata> {
    const client = await openIdClient();
    try {
      const config = await client.discovery(new URL(this.settings.issuer), this.settings.clientId, undefined, undefined, {
        timeout: this.seams.timeoutSeconds ?? 10,
        ...(this.seams.fetch ? { [client.customFetch]: this.seams.fetch as OpenIdClient.CustomFetch } : {}),
      });
      this.server = config.serverMetadata();
      return this.server;
    } catch (err) {
      throw unreachable(`could not read the provider's configuration at ${this.settings.issuer}`, err);
    }
  }

  /**
   * A configuration for one exchange with the provider, its clock set to ours (openid-client takes an offset from
   * the system clock, in seconds).
   */
  private configuration(client: Client, server: OpenIdClient.ServerMetadata): OpenIdClient.Configuration {
    const metadata: Partial<OpenIdClient.ClientMetadata> = { [client.clockSkew]: Math.round((this.now() - Date.now()) / 1000) };
    const auth = this.settings.clientSecret ? secretAuth(client, server, this.settings.clientSecret) : client.None();
    const config = new client.Configuration(server, this.settings.clientId, metadata, auth);
    config.timeout = this.seams.timeoutSeconds ?? 10;
    if (this.seams.fetch) config[client.customFetch] = this.seams.fetch as OpenIdClient.CustomFetch;
    return config;
  }

  /** Where to send the browser, and what to keep until it comes back (transaction.ts seals it). */
  async begin(returnTo?: string): Promise<{ url: URL; transaction: OidcTransaction }> {
    const server = await this.discover();
    const client = await openIdClient();
    const verifier = client.randomPKCECodeVerifier();
    const transaction: OidcTransaction = { state: client.randomState(), nonce: client.randomNonce(), verifier, startedAt: this.now(), ...(returnTo ? { returnTo } : {}) };
    const url = client.buildAuthorizationUrl(this.configuration(client, server), {
      redirect_uri: this.settings.redirectUri(),
      scope: this.settings.scopes,
      state: transaction.state,
      nonce: transaction.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { url, transaction };
  }

  /**
   * Finishes a sign-in from the provider's redirect back (`query`: its query string): checks the answer against
   * the transaction, exchanges the code, validates the ID token, and reads userinfo for claims the token lacks.
   */
  async complete(transaction: OidcTransaction, query: string): Promise<ExternalIdentity> {
    const server = this.server ?? (await this.discover());
    const client = await openIdClient();
    const config = this.configuration(client, server);
    const callback = new URL(this.settings.redirectUri());
    callback.search = query;
    let tokens: Awaited<ReturnType<Client['authorizationCodeGrant']>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: transaction.verifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw failure(client, err);
    }
    const idToken = tokens.claims()!;
    const claims = await this.withUserInfo(client, config, server, idToken, tokens.access_token);
    return { ...identityFromClaims(server.issuer, claims, this.settings.groupsClaim), session: this.sessionOf(idToken, tokens) };
  }

  /**
   * The ID token's claims and userinfo's: many providers put email and groups only in userinfo (OpenID Connect Core
   * §5.4). Where both have a claim, the ID token's wins.
   */
  private async withUserInfo(client: Client, config: OpenIdClient.Configuration, server: OpenIdClient.ServerMetadata, idToken: OpenIdClient.IDToken, accessToken: string | undefined): Promise<Record<string, unknown>> {
    if (!server.userinfo_endpoint || !accessToken) return { ...idToken };
    try {
      return { ...(await client.fetchUserInfo(config, accessToken, idToken.sub)), ...idToken };
    } catch (err) {
      throw failure(client, err);
    }
  }

  private sessionOf(idToken: OpenIdClient.IDToken, tokens: OpenIdClient.TokenEndpointResponse & { expiresIn(): number | undefined }, before?: ProviderSession): ProviderSession {
    const expiresIn = tokens.expiresIn();
    return {
      sid: typeof idToken.sid === 'string' ? idToken.sid : (before?.sid ?? null),
      // A provider that rotates refresh tokens sends a new one; one that does not keeps the old one working.
      refreshToken: tokens.refresh_token ?? before?.refreshToken ?? null,
      accessToken: tokens.access_token ?? null,
      accessTokenExpiresAt: expiresIn === undefined ? null : this.now() + expiresIn * 1000,
      amr: Array.isArray(idToken.amr) ? idToken.amr.filter((m): m is string => typeof m === 'string') : (before?.amr ?? []),
      acr: typeof idToken.acr === 'string' ? idToken.acr : (before?.acr ?? null),
    };
  }

  /**
   * Asks the provider whether the person signed in as `subject` may still be here, and who they are now: with the
   * refresh token (a new ID token and userinfo), else with userinfo while the access token lasts. `ended`: the
   * provider refused (the session or grant is over there, the account gone or locked), or nothing is left to ask
   * with. SsoError('unreachable' or 'untrusted') when it could not be asked.
   */
  async recheck(subject: string, session: ProviderSession): Promise<{ ended: true; why: string } | { ended: false; identity: ExternalIdentity }> {
    const server = this.server ?? (await this.discover());
    const client = await openIdClient();
    const config = this.configuration(client, server);
    try {
      if (session.refreshToken) {
        const tokens = await client.refreshTokenGrant(config, session.refreshToken);
        const idToken = tokens.claims() ?? ({ sub: subject } as OpenIdClient.IDToken);
        if (idToken.sub !== subject) return { ended: true, why: 'the provider answered for another person' };
        const claims = await this.withUserInfo(client, config, server, idToken, tokens.access_token);
        return { ended: false, identity: { ...identityFromClaims(server.issuer, claims, this.settings.groupsClaim), session: this.sessionOf(idToken, tokens, session) } };
      }
      if (session.accessToken && server.userinfo_endpoint && (session.accessTokenExpiresAt ?? 0) > this.now()) {
        const info = await client.fetchUserInfo(config, session.accessToken, subject);
        return { ended: false, identity: { ...identityFromClaims(server.issuer, info, this.settings.groupsClaim), session } };
      }
      return { ended: true, why: 'the provider gave nothing to ask it again with (no refresh token, and the access token expired)' };
    } catch (err) {
      // Userinfo's 401 (an access token revoked with the session) is the provider's no, not an outage.
      if (err instanceof client.WWWAuthenticateChallengeError) return { ended: true, why: `the provider refused the access token: ${describe(err)}` };
      const failed = failure(client, err);
      if (failed.failure === 'unreachable' || failed.failure === 'untrusted') throw failed;
      return { ended: true, why: failed.message };
    }
  }

  /**
   * Checks a back-channel logout token (OpenID Connect Back-Channel Logout 1.0 §2.6): signed by the provider with a
   * key of its JWKS, for us (audience), recent, with the logout event and a `sub` or `sid`, and no `nonce`. jose
   * checks the signature and times; openid-client has no call for this. Whom it logs out, or SsoError('invalid').
   */
  async verifyLogoutToken(token: string): Promise<{ issuer: string; sub: string | null; sid: string | null }> {
    const server = this.server ?? (await this.discover());
    if (!server.jwks_uri) throw new SsoError('invalid', 'the provider publishes no keys (jwks_uri) to check a logout token with');
    const { jwtVerify, createRemoteJWKSet, customFetch } = await import('jose');
    this.jwks ??= createRemoteJWKSet(new URL(server.jwks_uri), this.seams.fetch ? { [customFetch]: this.seams.fetch } : {});
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: server.issuer,
        audience: this.settings.clientId,
        maxTokenAge: '10m',
        clockTolerance: 30,
        currentDate: new Date(this.now()),
        requiredClaims: ['iat', 'jti', 'events'],
      }));
    } catch (err) {
      throw new SsoError('invalid', `the logout token failed a check: ${describe(err)}`, { cause: err });
    }
    const events = payload.events as Record<string, unknown> | undefined;
    if (!events || typeof events !== 'object' || typeof events[LOGOUT_EVENT] !== 'object') throw new SsoError('invalid', 'the logout token has no back-channel logout event');
    if ('nonce' in payload) throw new SsoError('invalid', 'the logout token has a nonce (an ID token sent as a logout token)');
    const sub = typeof payload.sub === 'string' ? payload.sub : null;
    const sid = typeof payload.sid === 'string' ? payload.sid : null;
    if (!sub && !sid) throw new SsoError('invalid', 'the logout token names neither a person (sub) nor a session (sid)');
    return { issuer: server.issuer, sub, sid };
  }

  /** The provider's metadata as last discovered, else discovered now; null when it cannot be had. */
  async metadata(): Promise<OpenIdClient.ServerMetadata | null> {
    return this.server ?? this.discover().catch(() => null);
  }

  /** RP-initiated logout at the provider's end_session_endpoint: our client id, and where to come back to. */
  async signOutUrl(server: OpenIdClient.ServerMetadata, postLogoutRedirectUri: string): Promise<URL> {
    const client = await openIdClient();
    return client.buildEndSessionUrl(this.configuration(client, server), { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri });
  }
}

/**
 * How the client secret is sent: client_secret_basic, the method a provider supports when its metadata names none
 * (RFC 8414 §2), unless it names client_secret_post and not basic.
 */
function secretAuth(client: Client, server: OpenIdClient.ServerMetadata, secret: string): OpenIdClient.ClientAuth {
  const methods = server.token_endpoint_auth_methods_supported;
  const postOnly = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
  return postOnly ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
}

/** An error's message with its causes (fetch failures say why only in `cause`). */
function describe(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (; e instanceof Error && parts.length < 4; e = e.cause) parts.push(e.message);
  // An unexpected answer's cause is the response itself: its status and address say what was wrong.
  if (e instanceof Response) parts.push(`${e.status} from ${e.url || 'the provider'}`);
  return parts.join(': ') || String(err);
}

/** What openid-client threw, as an SsoError that says which kind of failure it was. */
function failure(client: Client, err: unknown): SsoError {
  if (err instanceof client.AuthorizationResponseError) {
    return new SsoError('denied', `the provider ended the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`, { cause: err });
  }
  if (err instanceof client.ResponseBodyError) return new SsoError('denied', `the provider refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`, { cause: err });
  const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED') return new SsoError('clock', `the ID token's times do not fit this server's clock: ${describe(err)}`, { cause: err });
  if (err instanceof client.ClientError && code?.startsWith('OAUTH_')) return new SsoError('invalid', `the provider's answer failed a check: ${describe(err)}`, { cause: err });
  return unreachable('could not reach the provider', err);
}
