import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { addClient, authorizePath, consentFields, getCode, HEX64, loggedIn, post, type RegisteredClient } from '../oauth-flow.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const TOKEN = '/api/oauth/token';

/** RFC 8707 resource indicators: a token bound to /mcp is not a REST API token; one without resource still is. */
describe('resource indicators', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let app: RegisteredClient;
  let mcp: string;

  daemonForSuite(async (started) => {
    d = started;
    mcp = `${d.url}/mcp`;
    alice = await addUser(d);
    app = await addClient(d, { name: 'Resource App', redirectUris: [REDIRECT] });
    web = await loggedIn(d, alice);
  });

  const codeFor = (extra: Record<string, string> = {}) => getCode(web, { client_id: app.clientId, redirect_uri: REDIRECT, ...extra });
  const exchange = (code: string, extra: Record<string, string> = {}) =>
    post(d, TOKEN, { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret!, redirect_uri: REDIRECT, ...extra });
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: token, client_id: app.clientId, client_secret: app.clientSecret!, ...extra });

  it('carries resource through the consent form', async () => {
    const page = await web.get(authorizePath({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', resource: mcp }));
    expect(page.status).toBe(200);
    expect(consentFields(page.text).resource).toBe(mcp);
  });

  it('issues a token for /mcp that the REST API refuses with 401 invalid_token', async () => {
    const res = await exchange(await codeFor({ resource: mcp }));
    expect(res.status).toBe(200);
    expect(res.body.access_token).toMatch(HEX64);
    const refused = await api(d, '/api/v1/projects', { token: res.body.access_token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe(`this access token was issued for another resource (${mcp})`);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('keeps tokens issued without resource (and with a REST API name) working on the REST API', async () => {
    for (const extra of [{} as Record<string, string>, { resource: d.url }, { resource: `${d.url}/` }, { resource: `${d.url}/api/v1` }]) {
      const res = await exchange(await codeFor(extra));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      const ok = await api(d, '/api/v1/projects', { token: res.body.access_token });
      expect(ok.status).toBe(200);
    }
  });

  it('answers invalid_target when the token request names another resource than the code, and leaves the code usable', async () => {
    const code = await codeFor({ resource: mcp });
    const mismatch = await exchange(code, { resource: d.url });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({ error: 'invalid_target', error_description: `resource ${d.url} (the REST API) differs from the authorization request's (${mcp})` });
    const unknown = await exchange(code, { resource: 'https://elsewhere.example.com/mcp' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_target');
    const fragment = await exchange(code, { resource: `${mcp}#x` });
    expect(fragment.body).toEqual({ error: 'invalid_target', error_description: 'resource must not contain a fragment (RFC 8707 §2)' });
    expect((await exchange(code, { resource: mcp })).status).toBe(200);
  });

  it('redirects invalid_target for an unknown resource at authorize', async () => {
    const res = await web.get(authorizePath({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', state: 's1', resource: 'https://evil.example.com/mcp' }));
    expect(res.status).toBe(302);
    const to = new URL(res.location!);
    expect(`${to.origin}${to.pathname}`).toBe(REDIRECT);
    expect(to.searchParams.get('error')).toBe('invalid_target');
    expect(to.searchParams.get('error_description')).toContain('unknown resource https://evil.example.com/mcp');
    expect(to.searchParams.get('state')).toBe('s1');
    const relative = await web.get(authorizePath({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', resource: '/mcp' }));
    expect(new URL(relative.location!).searchParams.get('error')).toBe('invalid_target');
  });

  it('keeps the binding across refreshes', async () => {
    const first = await exchange(await codeFor({ resource: mcp }));
    const mismatch = await refresh(first.body.refresh_token, { resource: `${d.url}/api/v1` });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('invalid_target');
    // Refused for the resource it is bound to, not as an unknown token: the binding held.
    const boundElsewhere = async (token: string) => {
      const res = await api(d, '/api/v1/projects', { token });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe(`this access token was issued for another resource (${mcp})`);
    };
    const plain = await refresh(first.body.refresh_token);
    expect(plain.status).toBe(200);
    await boundElsewhere(plain.body.access_token);
    const named = await refresh(plain.body.refresh_token, { resource: mcp });
    expect(named.status).toBe(200);
    await boundElsewhere(named.body.access_token);

    const rest = await exchange(await codeFor());
    const again = await refresh(rest.body.refresh_token);
    expect((await api(d, '/api/v1/projects', { token: again.body.access_token })).status).toBe(200);
    expect((await refresh(again.body.refresh_token, { resource: mcp })).body.error).toBe('invalid_target');
  });
});
