import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';
import { addClient, authorizePath, getCode, loggedIn, post } from '../oauth-flow.js';

/** Security findings of issue #12 (items 10–13), each through the real daemon behind a (simulated) proxy. */

const REDIRECT = 'http://127.0.0.1:9/cb';
const EVIL = 'https://evil.example/x';

/** A login form session from a given client address, as a proxy would forward it. */
async function loginFrom(d: Daemon, forwardedFor: string): Promise<(email: string, password: string) => Promise<number>> {
  const web = new WebClient(d);
  web.headers['x-forwarded-for'] = forwardedFor;
  await web.get('/login');
  const csrf = web.csrf;
  return async (email, password) => (await web.post('/login', { _csrf: csrf, email, password, return_to: '' })).status;
}

describe('auth hardening', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
      carol = await addUser(d);
    },
    { args: ['--trust-proxy'] },
  );

  it('an OAuth access token cannot list, create or revoke API keys; an API key of the user can', async () => {
    const app = await addClient(d, { name: 'Notes', redirectUris: [REDIRECT] });
    const web = await loggedIn(d, alice);
    const code = await getCode(web, { client_id: app.clientId, redirect_uri: REDIRECT });
    const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret!, redirect_uri: REDIRECT });
    expect(token.status).toBe(200);
    const access: string = token.body.access_token;
    expect((await api(d, '/api/v1/projects', { token: access })).status).toBe(200); // the token works for data

    const created = await api(d, '/api/v1/keys', { token: access, body: { name: 'from-app' } });
    expect(created.status).toBe(403);
    expect(created.body.error.message).toBe('API keys are managed with an API key or in Settings → API keys, not with an application’s access token');
    expect(created.body.key).toBeUndefined();
    expect((await api(d, '/api/v1/keys', { token: access })).status).toBe(403);
    const own = await api(d, '/api/v1/keys', { token: alice.apiKey });
    expect(own.status).toBe(200);
    expect((await api(d, `/api/v1/keys/${own.body.keys[0].id}`, { method: 'DELETE', token: access })).status).toBe(403);
    expect(own.body.keys.map((k: { name: string }) => k.name)).not.toContain('from-app');
    // The user's own API key still manages keys.
    const made = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'mine' } });
    expect(made.status).toBe(201);
    expect((await api(d, `/api/v1/keys/${made.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
  });

  it('200 concurrent wrong passwords: at most 5 are checked, the rest are throttled', async () => {
    const attempt = await loginFrom(d, '203.0.113.7');
    const statuses = await Promise.all(Array.from({ length: 200 }, () => attempt(carol.email, 'wrong password, guess')));
    const checked = statuses.filter((s) => s === 401).length;
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(checked).toBeGreaterThan(0);
    expect(checked).toBeLessThanOrEqual(5);
    // Locked: the right password waits too.
    expect(await attempt(carol.email, carol.password)).toBe(429);
  });

  it('behind a proxy the lock keys on the address the proxy saw, not on the client-chosen leftmost entry', async () => {
    const proxySaw = '192.0.2.50';
    for (let i = 0; i < 5; i++) {
      const attempt = await loginFrom(d, `198.51.100.${i}, ${proxySaw}`);
      expect(await attempt(`nobody${i}@example.com`, 'wrong password, guess')).toBe(401);
    }
    const sixth = await loginFrom(d, `198.51.100.99, ${proxySaw}`);
    expect(await sixth(`nobody-else@example.com`, 'wrong password, guess')).toBe(429);
    // Another address the proxy saw is not affected.
    const other = await loginFrom(d, `198.51.100.1, 192.0.2.51`);
    expect(await other(`nobody@example.com`, 'wrong password, guess')).toBe(401);
  });

  describe('authorize is not an open redirector (RFC 9700 §4.11.2)', () => {
    /** An application registered by a user on Settings → Applications, with the attacker's redirect URI. */
    async function userApp(owner: WebClient): Promise<string> {
      await owner.get('/settings/applications');
      const res = await owner.submit('/settings/applications', { _csrf: owner.csrf, name: 'Totally Legit', redirect_uris: EVIL });
      return /id="new-client-id" readonly value="([^"]+)"/.exec(res.text)![1]!;
    }

    it('a signed-out browser gets an error page, never a redirect, for a bad request', async () => {
      const mallory = await loggedIn(d, bob);
      const clientId = await userApp(mallory);
      const anon = new WebClient(d);
      for (const params of [
        { client_id: clientId, redirect_uri: EVIL }, // the reported case: no response_type
        { client_id: clientId, redirect_uri: EVIL, response_type: 'token', state: 's' },
        { client_id: clientId, redirect_uri: 'https://elsewhere.example/cb', response_type: 'code' },
        { client_id: clientId, response_type: 'code' },
      ]) {
        const res = await anon.get(authorizePath(params));
        expect(res.status, JSON.stringify(params)).toBe(400);
        expect(res.location).toBeNull();
        expect(res.text).toContain('<code class="oauth-error">');
      }
      // A valid request still goes to the login page first.
      const valid = await anon.get(authorizePath({ client_id: clientId, redirect_uri: EVIL, response_type: 'code' }));
      expect(valid.status).toBe(302);
      expect(valid.location).toMatch(/^\/login\?return_to=/);
    });

    it("a signed-in user is not redirected to another user's application on error; the owner is", async () => {
      const owner = await loggedIn(d, bob);
      const clientId = await userApp(owner);
      const victim = await loggedIn(d, alice);
      const bad = { client_id: clientId, redirect_uri: EVIL, state: 'xyz' };
      const res = await victim.get(authorizePath(bad));
      expect(res.status).toBe(400);
      expect(res.location).toBeNull();
      expect(res.text).toContain('missing required parameter: response_type');
      const own = await owner.get(authorizePath(bad));
      expect(own.status).toBe(302);
      expect(new URL(own.location!).searchParams.get('error')).toBe('invalid_request');
    });
  });
});
