import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../../ingest/pipeline/helpers.js';
import type { WebClient } from '../../server/web-client.js';
import { addClient, getCode, HEX64, loggedIn, pkce, post, type RegisteredClient } from '../oauth-flow.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const TOKEN = '/api/oauth/token';

describe('token endpoint', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let app: RegisteredClient;
  let other: RegisteredClient;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob] = [await addUser(d), await addUser(d)];
    app = await addClient(d, { name: 'Confidential App', redirectUris: [REDIRECT, 'https://app.example.com/cb'] });
    other = await addClient(d, { name: 'Other App', redirectUris: [REDIRECT] });
    web = await loggedIn(d, alice);
  });

  const codeFor = (client: RegisteredClient, extra: Record<string, string> = {}) => getCode(web, { client_id: client.clientId, redirect_uri: REDIRECT, ...extra });
  const exchange = (client: RegisteredClient, code: string, extra: Record<string, string | undefined> = {}, opts = {}) =>
    post(d, TOKEN, { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.clientSecret!, redirect_uri: REDIRECT, ...extra }, opts);

  it('exchanges a code (JSON body, the spec) for exactly the spec token response', async () => {
    const code = await codeFor(app);
    expect(code).toMatch(/^[0-9A-Za-z]{64}$/);
    const res = await exchange(app, code);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(res.body.access_token).toMatch(HEX64);
    expect(res.body.refresh_token).toMatch(HEX64);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(3600);
    expect(res.body.scope).toBe('read:documents write:documents');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const projects = await api(d, '/api/v1/projects', { token: res.body.access_token });
    expect(projects.status).toBe(200);
    expect(projects.body.projects.map((p: { name: string }) => p.name)).toEqual(['default']);
    // The spec's step 3: the access token is the Bearer credential of the spec's upload and search too.
    const marker = 'Quokkas nap beside the lighthouse of Tauranga.';
    const files = [
      { name: 'quokka.txt', bytes: Buffer.from(`${marker}\n`) },
      { name: 'wombat.txt', bytes: Buffer.from('Wombats dig burrows far from any lighthouse.\n') },
    ];
    const up = await uploadFiles(d, res.body.access_token, files, { query: '?wait=true' });
    expect(up.status).toBe(200);
    expect(up.body.documents).toMatchObject([
      { filename: 'quokka.txt', status: 'ready' },
      { filename: 'wombat.txt', status: 'ready' },
    ]);
    const found = await api(d, '/api/v1/search', { token: res.body.access_token, body: { query: 'quokkas lighthouse', limit: 1 } });
    expect(found.status).toBe(200);
    expect(found.body.results).toHaveLength(1);
    expect(found.body.results[0].text).toContain(marker);
  });

  it('accepts form-encoded bodies with client_secret_post and with HTTP Basic', async () => {
    const viaForm = await exchange(app, await codeFor(app), {}, { as: 'form' });
    expect(viaForm.status).toBe(200);
    expect(viaForm.body.access_token).toMatch(HEX64);
    const code = await codeFor(app);
    const viaBasic = await post(d, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { basic: [app.clientId, app.clientSecret!] });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.body.refresh_token).toMatch(HEX64);
  });

  it('refuses a second use of a code with invalid_grant and revokes the tokens issued from it', async () => {
    const code = await codeFor(app);
    const first = await exchange(app, code);
    expect(first.status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: first.body.access_token })).status).toBe(200);
    const second = await exchange(app, code);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ error: 'invalid_grant', error_description: 'authorization code has already been used; the tokens issued from it are revoked' });
    const after = await api(d, '/api/v1/projects', { token: first.body.access_token });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: app.clientId, client_secret: app.clientSecret! });
    expect(refresh.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });
  });

  it('refuses a code presented by another client, and leaves it usable by its own', async () => {
    const code = await codeFor(app);
    const res = await exchange(other, code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'authorization code was issued to another client' });
    expect((await exchange(app, code)).status).toBe(200);
  });

  it('refuses a redirect_uri that differs from the authorization request (invalid_grant) or is not registered (invalid_redirect_uri)', async () => {
    const code = await codeFor(app);
    const res = await exchange(app, code, { redirect_uri: 'https://app.example.com/cb' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the one in the authorization request' });
    const missing = await exchange(app, code, { redirect_uri: undefined });
    expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: redirect_uri' });
    // The spec's error table: a redirect URI that differs from the registered one is invalid_redirect_uri.
    for (const unregistered of ['https://evil.example/cb', 'http://127.0.0.1:10/callback', `${REDIRECT}/extra`]) {
      const res = await exchange(app, code, { redirect_uri: unregistered });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_redirect_uri', error_description: 'redirect_uri is not registered for this client' });
    }
    // None of that consumed the code.
    expect((await exchange(app, code)).status).toBe(200);
  });

  it('answers a wrong or missing client secret with 401 invalid_client', async () => {
    const code = await codeFor(app);
    const wrong = await exchange(app, code, { client_secret: 'dscs_wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: client_secret is incorrect' });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic realm="docsearch"/);
    const missing = await exchange(app, code, { client_secret: undefined });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: client_secret is required' });
    const basic = await post(d, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { basic: [app.clientId, 'nope'] });
    expect(basic.status).toBe(401);
    expect(basic.body.error).toBe('invalid_client');
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic realm="docsearch"/);
    const unknown = await exchange({ clientId: 'app_unknown', clientSecret: 'x' }, code);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: unknown client_id' });
    // The code survived all of that: failed client authentication never consumes it.
    expect((await exchange(app, code)).status).toBe(200);
  });

  it('answers an unknown grant_type with unsupported_grant_type and a missing one with invalid_request', async () => {
    const res = await post(d, TOKEN, { grant_type: 'password', client_id: app.clientId, client_secret: app.clientSecret!, username: 'a', password: 'b' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: 'grant_type password is not supported (supported: authorization_code, refresh_token)' });
    const missing = await post(d, TOKEN, { client_id: app.clientId, client_secret: app.clientSecret! });
    expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: grant_type' });
  });

  it('answers malformed bodies in the RFC 6749 error format, not the /api/v1 one', async () => {
    const bad = await fetch(d.url + TOKEN, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'invalid_request', error_description: 'the request body is not valid JSON' });
    const text = await fetch(d.url + TOKEN, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=x' });
    expect(await text.json()).toEqual({ error: 'invalid_request', error_description: 'the request body must be application/json or application/x-www-form-urlencoded' });
    const repeated = await fetch(d.url + TOKEN, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=a&code=b' });
    expect(await repeated.json()).toEqual({ error: 'invalid_request', error_description: 'parameter code must not be repeated' });
    const unknownCode = await exchange(app, 'x'.repeat(64));
    expect(unknownCode.body).toEqual({ error: 'invalid_grant', error_description: 'authorization code is invalid' });
    // The spec's Content-Type: application/json, with a charset as many clients send it, is read as JSON.
    const withCharset = await fetch(d.url + TOKEN, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x'.repeat(64), client_id: app.clientId, client_secret: app.clientSecret, redirect_uri: REDIRECT }),
    });
    expect(await withCharset.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code is invalid' });
  });

  it('honours PKCE for confidential clients: wrong or missing verifier is invalid_grant', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(app, { code_challenge: challenge, code_challenge_method: 'S256' });
    const wrong = await exchange(app, code, { code_verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'PKCE verification failed: code_verifier does not match code_challenge' });
    const missing = await exchange(app, code);
    expect(missing.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier is required: the authorization request used PKCE' });
    expect((await exchange(app, code, { code_verifier: verifier })).status).toBe(200);
    const noChallenge = await exchange(app, await codeFor(app), { code_verifier: verifier });
    expect(noChallenge.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier was sent but the authorization request had no code_challenge' });
  });

  it('lets the public CLI client in with PKCE and no secret, and refuses a wrong verifier', async () => {
    const cliRedirect = 'http://127.0.0.1:53123/callback';
    const { verifier, challenge } = pkce();
    const code = await getCode(web, { client_id: 'docsearch-cli', redirect_uri: cliRedirect, code_challenge: challenge, code_challenge_method: 'S256' });
    const body = { grant_type: 'authorization_code', code, client_id: 'docsearch-cli', redirect_uri: cliRedirect };
    const wrong = await post(d, TOKEN, { ...body, code_verifier: pkce().verifier });
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'PKCE verification failed: code_verifier does not match code_challenge' });
    const withSecret = await post(d, TOKEN, { ...body, code_verifier: verifier, client_secret: 'anything' });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: this public client has no secret' });
    const ok = await post(d, TOKEN, { ...body, code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect(ok.body.access_token).toMatch(HEX64);
  });

  it('rotates refresh tokens, and reuse of a rotated one revokes the whole grant', async () => {
    const first = await exchange(app, await codeFor(app));
    const refresh = (token: string, extra: Record<string, string> = {}) =>
      post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: token, client_id: app.clientId, client_secret: app.clientSecret!, ...extra });
    const second = await refresh(first.body.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).toMatch(HEX64);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(second.body.expires_in).toBe(3600);
    expect((await api(d, '/api/v1/projects', { token: second.body.access_token })).status).toBe(200);

    const narrowed = await refresh(second.body.refresh_token, { scope: 'read:documents' });
    expect(narrowed.body.scope).toBe('read:documents');
    const wider = await refresh(narrowed.body.refresh_token, { scope: 'read:documents admin' });
    expect(wider.body).toEqual({ error: 'invalid_scope', error_description: 'scope exceeds the grant: admin' });

    const reuse = await refresh(first.body.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has already been used; the grant is revoked' });
    for (const t of [second.body.access_token, narrowed.body.access_token]) expect((await api(d, '/api/v1/projects', { token: t })).status).toBe(401);
    expect((await refresh(narrowed.body.refresh_token)).body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });
  });

  it('refuses a refresh token presented by another client', async () => {
    const tokens = await exchange(app, await codeFor(app));
    const res = await post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: other.clientId, client_secret: other.clientSecret! });
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token was issued to another client' });
  });

  it('enforces scopes: a read:documents token gets 403 on a write route', async () => {
    const tokens = await exchange(app, await codeFor(app, { scope: 'read:documents' }));
    expect(tokens.body.scope).toBe('read:documents');
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(200);
    const write = await api(d, '/api/v1/projects', { token: tokens.body.access_token, body: { name: 'nope' } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('insufficient_scope');
    expect(write.body.error.message).toBe('this credential lacks the write:documents scope');
  });

  it("never lets user A's token reach user B's project", async () => {
    const bobProject = await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'bob-private' } });
    expect(bobProject.status).toBe(201);
    const tokens = await exchange(app, await codeFor(app));
    const res = await api(d, `/api/v1/projects/${bobProject.body.id}`, { token: tokens.body.access_token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    const list = await api(d, '/api/v1/projects', { token: tokens.body.access_token });
    expect(list.body.projects.map((p: { id: string }) => p.id)).not.toContain(bobProject.body.id);
  });

  it('revokes tokens (RFC 7009): an access token alone, a refresh token with its grant, unknown ones with 200', async () => {
    const a = await exchange(app, await codeFor(app));
    const auth = { client_id: app.clientId, client_secret: app.clientSecret! };
    const r1 = await post(d, '/api/oauth/revoke', { token: a.body.access_token, ...auth });
    expect(r1.status).toBe(200);
    expect(r1.body).toBeUndefined();
    expect((await api(d, '/api/v1/projects', { token: a.body.access_token })).status).toBe(401);
    const refreshed = await post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: a.body.refresh_token, ...auth });
    expect(refreshed.status).toBe(200);

    expect((await post(d, '/api/oauth/revoke', { token: refreshed.body.refresh_token, token_type_hint: 'refresh_token' }, { basic: [app.clientId, app.clientSecret!] })).status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: refreshed.body.access_token })).status).toBe(401);
    // The refresh token itself no longer refreshes.
    const again = await post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, ...auth });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');

    expect((await post(d, '/api/oauth/revoke', { token: 'f'.repeat(64), ...auth })).status).toBe(200);
    const b = await exchange(app, await codeFor(app));
    const foreign = await post(d, '/api/oauth/revoke', { token: b.body.access_token, client_id: other.clientId, client_secret: other.clientSecret! });
    expect(foreign.status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: b.body.access_token })).status).toBe(200);
    const unauth = await post(d, '/api/oauth/revoke', { token: b.body.access_token, client_id: app.clientId });
    expect(unauth.status).toBe(401);
    expect(unauth.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: client_secret is required' });
    const noToken = await post(d, '/api/oauth/revoke', auth);
    expect(noToken.body).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: token' });
  });

  it('serves RFC 8414 metadata', async () => {
    const res = await api(d, '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: d.url,
      authorization_endpoint: `${d.url}/api/oauth/authorize`,
      token_endpoint: `${d.url}/api/oauth/token`,
      revocation_endpoint: `${d.url}/api/oauth/revoke`,
      scopes_supported: ['read:documents', 'write:documents'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
    });
  });
});
