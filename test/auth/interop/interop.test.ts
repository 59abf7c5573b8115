import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { addClient, authorizePath, consentFields, loggedIn } from '../oauth-flow.js';

/**
 * A standard client library (oauth4webapi) against the real daemon: discovery, authorization
 * code + PKCE, refresh, revocation. The browser part (login, consent) is a cookie-holding HTTP
 * client posting the real forms.
 */
const HTTP = { [oauth.allowInsecureRequests]: true } as const;

describe('interop with oauth4webapi', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let as: oauth.AuthorizationServer;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    web = await loggedIn(d, alice);
    const issuer = new URL(d.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...HTTP }));
  });

  /** What a browser does between the client's redirect and its callback: consent as alice. */
  async function browse(authorizationUrl: URL): Promise<URL> {
    const consent = await web.get(authorizationUrl.pathname + authorizationUrl.search);
    expect(consent.status).toBe(200);
    const res = await web.post('/oauth/consent', { ...consentFields(consent.text), decision: 'approve' });
    expect(res.status).toBe(303);
    return new URL(res.location!);
  }

  async function run(client: oauth.Client, auth: oauth.ClientAuth, redirectUri: string) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read:documents write:documents',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const callback = await browse(url);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    expect(params.get('code')).toMatch(/^[0-9A-Za-z]{64}$/);

    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, HTTP));
    expect(tokens.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokens.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokens.token_type).toBe('bearer'); // oauth4webapi lower-cases it
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('read:documents write:documents');
    expect((await api(d, '/api/v1/projects', { token: tokens.access_token })).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, HTTP));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(d, '/api/v1/projects', { token: refreshed.access_token })).status).toBe(200);

    // Reusing the rotated refresh token is refused with the RFC error, surfaced by the library.
    const reuse = await oauth
      .processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, HTTP))
      .catch((e: unknown) => e);
    expect(reuse).toBeInstanceOf(oauth.ResponseBodyError);
    expect((reuse as oauth.ResponseBodyError).error).toBe('invalid_grant');
    expect((reuse as oauth.ResponseBodyError).status).toBe(400);
    return refreshed;
  }

  it('completes code + PKCE + refresh + revoke as a confidential client (client_secret_basic)', async () => {
    const redirectUri = 'http://127.0.0.1:9/interop/callback';
    const registered = await addClient(d, { name: 'Interop App', redirectUris: [redirectUri] });
    const client: oauth.Client = { client_id: registered.clientId };
    const auth = oauth.ClientSecretBasic(registered.clientSecret!);
    await run(client, auth, redirectUri);

    // Revocation: a clean flow (client_secret_post this time), then revoking the refresh token ends the grant.
    const post = oauth.ClientSecretPost(registered.clientSecret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: client.client_id, redirect_uri: redirectUri, response_type: 'code', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).toString();
    const params = oauth.validateAuthResponse(as, client, await browse(url), oauth.expectNoState);
    const fresh = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, post, params, redirectUri, verifier, HTTP));
    expect((await api(d, '/api/v1/projects', { token: fresh.access_token })).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, post, fresh.refresh_token!, HTTP));
    expect((await api(d, '/api/v1/projects', { token: fresh.access_token })).status).toBe(401);
    // The revoked refresh token no longer refreshes.
    const refused = await oauth
      .processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, post, fresh.refresh_token!, HTTP))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect((refused as oauth.ResponseBodyError).error).toBe('invalid_grant');
  });

  it('completes the flow as the public CLI client (none + PKCE, loopback redirect on any port)', async () => {
    const client: oauth.Client = { client_id: 'docsearch-cli', token_endpoint_auth_method: 'none' };
    const refreshed = await run(client, oauth.None(), 'http://127.0.0.1:48213/callback');
    // The reuse inside run() revoked the grant: the last access token is dead, and revoking it again is still 200.
    expect((await api(d, '/api/v1/projects', { token: refreshed.access_token })).status).toBe(401);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.access_token, HTTP));
  });
});
