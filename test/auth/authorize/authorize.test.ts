import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/sql/open-database.js';
import { addUser, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';
import { addClient, authorizePath, consentFields, decide, loggedIn, pkce, type RegisteredClient } from '../oauth-flow.js';

const REDIRECT = 'http://127.0.0.1:9/cb';
const ODD_STATE = 'a b&c=d?e#f/g%20h+i\u00e9\u{1F600}<script>"\'`';

describe('authorize endpoint', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let app: RegisteredClient;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    app = await addClient(d, { name: 'Notes <App>', redirectUris: [REDIRECT, 'https://notes.example.com/cb?x=1'] });
    web = await loggedIn(d, alice);
  });

  const base = () => ({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz' });

  /** Follows nothing: returns the error parameters of a redirect to `expectedTarget`. */
  async function errorRedirect(params: Record<string, string | undefined>, expectedTarget = REDIRECT) {
    const res = await web.get(authorizePath(params));
    expect(res.status).toBe(302);
    const loc = new URL(res.location!);
    expect(loc.origin + loc.pathname).toBe(expectedTarget);
    expect(loc.searchParams.has('code')).toBe(false);
    return Object.fromEntries(loc.searchParams);
  }

  it('sends a signed-out user to the login page and back to the authorize URL', async () => {
    const anon = new WebClient(d);
    const path = authorizePath(base());
    const res = await anon.get(path);
    expect(res.status).toBe(302);
    expect(res.location).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    const login = await anon.get(res.location!);
    expect(login.text).toContain(`name="return_to" value="${path.replace(/&/g, '&amp;')}"`);
    const posted = await anon.post('/login', { _csrf: anon.csrf, email: alice.email, password: alice.password, return_to: path });
    expect(posted.status).toBe(302);
    expect(posted.location).toBe(path);
    const consent = await anon.get(path);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Notes &lt;App&gt;');
  });

  it('shows the app name and requested scopes in plain words on the consent screen', async () => {
    const res = await web.get(authorizePath({ ...base(), scope: 'read:documents' }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('Authorize <bdi class="app-name">Notes &lt;App&gt;</bdi>?');
    expect(res.text).toContain('Search and read your documents and projects');
    expect(res.text).not.toContain('Upload, change and delete');
    expect(res.text).toContain('<code>127.0.0.1:9</code>');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('redirects with a 64-character code and the same state on approval', async () => {
    const { redirect } = await decide(web, base(), 'approve');
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT);
    expect(redirect.searchParams.get('code')).toMatch(/^[0-9A-Za-z]{64}$/);
    expect(redirect.searchParams.get('state')).toBe('xyz');
  });

  it('keeps the registered URI query and echoes odd state characters unchanged', async () => {
    const { redirect } = await decide(web, { ...base(), redirect_uri: 'https://notes.example.com/cb?x=1', state: ODD_STATE }, 'approve');
    expect(redirect.searchParams.get('x')).toBe('1');
    expect(redirect.searchParams.get('state')).toBe(ODD_STATE);
    const denied = await decide(web, { ...base(), state: ODD_STATE }, 'deny');
    expect(denied.redirect.searchParams.get('state')).toBe(ODD_STATE);
    const error = await errorRedirect({ ...base(), scope: 'bogus', state: ODD_STATE });
    expect(error.state).toBe(ODD_STATE);
  });

  it('omits state when none was sent', async () => {
    const { redirect } = await decide(web, { ...base(), state: undefined }, 'approve');
    expect(redirect.searchParams.has('state')).toBe(false);
    expect(redirect.searchParams.get('code')).toMatch(/^[0-9A-Za-z]{64}$/);
  });

  it('redirects access_denied when the user denies', async () => {
    const { redirect } = await decide(web, base(), 'deny');
    expect(Object.fromEntries(redirect.searchParams)).toEqual({ error: 'access_denied', error_description: 'the user denied the request', state: 'xyz' });
  });

  it('shows an error page, never a redirect, for an unknown client', async () => {
    const res = await web.get(authorizePath({ ...base(), client_id: 'app_nope', redirect_uri: 'https://evil.example/steal' }));
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.text).toContain('<code class="oauth-error">invalid_client</code>');
    expect(res.text).toContain('unknown client_id: no application is registered under it');
    const missing = await web.get(authorizePath({ ...base(), client_id: undefined }));
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('missing required parameter: client_id');
  });

  it('sends invalid_redirect_uri to the registered URI, never to the unregistered one', async () => {
    for (const bad of ['https://evil.example/cb', 'http://127.0.0.1:10/cb', `${REDIRECT}/extra`, `${REDIRECT}?a=1`]) {
      const params = await errorRedirect({ ...base(), redirect_uri: bad });
      expect(params).toEqual({ error: 'invalid_redirect_uri', error_description: 'redirect_uri is not registered for this client', state: 'xyz' });
    }
    expect(await errorRedirect({ ...base(), redirect_uri: undefined })).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: redirect_uri', state: 'xyz' });
  });

  it('re-checks the redirect_uri posted with the consent form', async () => {
    const consent = await web.get(authorizePath(base()));
    const res = await web.post('/oauth/consent', { ...consentFields(consent.text), redirect_uri: 'https://evil.example/cb', decision: 'approve' });
    expect(res.status).toBe(303);
    const loc = new URL(res.location!);
    expect(loc.origin + loc.pathname).toBe(REDIRECT);
    expect(loc.searchParams.get('error')).toBe('invalid_redirect_uri');
  });

  it('grants nothing for a consent post without an approval: no decision, an empty one or one it does not know', async () => {
    for (const decision of [undefined, '', 'yes', 'APPROVE']) {
      const consent = await web.get(authorizePath(base()));
      const res = await web.post('/oauth/consent', { ...consentFields(consent.text), ...(decision === undefined ? {} : { decision }) });
      expect(res.status, String(decision)).toBe(303);
      const loc = new URL(res.location!);
      expect(loc.origin + loc.pathname).toBe(REDIRECT);
      expect(Object.fromEntries(loc.searchParams), String(decision)).toMatchObject({ error: 'access_denied', state: 'xyz' });
      expect(loc.searchParams.has('code')).toBe(false);
    }
  });

  it('refuses a consent post without the CSRF token', async () => {
    const consent = await web.get(authorizePath(base()));
    const { _csrf, ...fields } = consentFields(consent.text);
    const res = await web.post('/oauth/consent', { ...fields, decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.location).toBeNull();
    expect(res.text).toContain('the form expired or did not come from this site');
  });

  it('refuses a consent post from a signed-out browser without redirecting', async () => {
    const consent = await web.get(authorizePath(base()));
    const anon = new WebClient(d);
    await anon.get('/login');
    const res = await anon.post('/oauth/consent', { ...consentFields(consent.text), _csrf: anon.csrf, decision: 'approve' });
    expect(res.status).toBe(401);
    expect(res.location).toBeNull();
    expect(res.text).toContain('your session ended before you decided — start again from the application');
  });

  it('redirects request errors with error, error_description and state', async () => {
    expect(await errorRedirect({ ...base(), response_type: undefined })).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: response_type', state: 'xyz' });
    expect(await errorRedirect({ ...base(), response_type: 'token' })).toEqual({ error: 'unsupported_response_type', error_description: 'response_type must be code', state: 'xyz' });
    expect(await errorRedirect({ ...base(), scope: 'read:documents admin' })).toEqual({
      error: 'invalid_scope',
      error_description: 'unknown scope: admin (supported: read:documents write:documents)',
      state: 'xyz',
    });
    expect(await errorRedirect({ ...base(), code_challenge: pkce().challenge, code_challenge_method: 'plain' })).toEqual({
      error: 'invalid_request',
      error_description: 'code_challenge_method must be S256 (plain is not supported)',
      state: 'xyz',
    });
    expect(await errorRedirect({ ...base(), code_challenge: pkce().challenge })).toEqual({
      error: 'invalid_request',
      error_description: 'code_challenge_method=S256 is required with code_challenge',
      state: 'xyz',
    });
    expect(await errorRedirect({ ...base(), code_challenge: 'short', code_challenge_method: 'S256' })).toEqual({
      error: 'invalid_request',
      error_description: 'code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]',
      state: 'xyz',
    });
  });

  it('requires PKCE for the public CLI client and accepts any loopback port (RFC 8252)', async () => {
    const cli = { client_id: 'docsearch-cli', response_type: 'code', state: 's' };
    const noPkce = await errorRedirect({ ...cli, redirect_uri: 'http://127.0.0.1:41234/callback' }, 'http://127.0.0.1:41234/callback');
    expect(noPkce).toEqual({ error: 'invalid_request', error_description: 'PKCE is required for public clients: send code_challenge and code_challenge_method=S256', state: 's' });
    const { challenge } = pkce();
    for (const uri of ['http://127.0.0.1:41234/callback', 'http://127.0.0.1:5/callback', 'http://[::1]:6553/callback']) {
      const res = await web.get(authorizePath({ ...cli, redirect_uri: uri, code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(res.status).toBe(200);
      expect(res.text).toContain('docsearch CLI');
    }
    // Not loopback literals, or another path than the registered one (RFC 8252 §7.3: only the port varies): an
    // error page, never the registered URI (its port is whatever the CLI listens on at the time).
    const others = ['http://127.0.0.1:5/x', 'http://127.0.0.1:5/callback/', 'http://127.0.0.1:5/callback?x=1', 'http://[::1]:5/cb'];
    for (const uri of ['http://localhost:41234/callback', 'https://127.0.0.1:41234/callback', 'http://127.0.0.2:1/cb', 'http://evil.example/cb', ...others]) {
      const res = await web.get(authorizePath({ ...cli, redirect_uri: uri, code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(res.status).toBe(400);
      expect(res.location).toBeNull();
      expect(res.text).toContain('<code class="oauth-error">invalid_redirect_uri</code>');
    }
  });

  it('redirects server_error with error_description and state when the code cannot be issued', async () => {
    const consent = await web.get(authorizePath(base()));
    expect(consent.status).toBe(200);
    // The codes' table gone underneath the daemon (SQLite file or PostgreSQL): issuing the code fails inside.
    const rename = async (from: string, to: string) => {
      const handle = await openDatabase({ url: d.databaseUrl, dataDir: d.dataDir, migrate: false });
      try {
        await sql`ALTER TABLE ${sql.table(from)} RENAME TO ${sql.table(to)}`.execute(handle.db);
      } finally {
        await handle.close();
      }
    };
    await rename('oauth_codes', 'oauth_codes_away');
    let res;
    try {
      res = await web.post('/oauth/consent', { ...consentFields(consent.text), decision: 'approve' });
    } finally {
      await rename('oauth_codes_away', 'oauth_codes');
    }
    expect(res.status).toBe(303);
    const loc = new URL(res.location!);
    expect(loc.origin + loc.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(loc.searchParams)).toEqual({ error: 'server_error', error_description: 'internal server error', state: 'xyz' });
    // Mended, the same request gets its code.
    const { redirect } = await decide(web, base(), 'approve');
    expect(redirect.searchParams.get('code')).toMatch(/^[0-9A-Za-z]{64}$/);
  });

  it('refuses repeated parameters with an error page', async () => {
    const res = await web.get(`${authorizePath(base())}&state=again`);
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.text).toContain('parameter state must not be repeated');
  });
});
