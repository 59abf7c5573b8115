import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { authorizePath, consentFields, decide, getCode, HEX64, loggedIn, pkce, post, signedInSuite } from '../oauth-flow.js';

const REGISTER = '/api/oauth/register';
const TOKEN = '/api/oauth/token';

async function register(d: Daemon, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(d.url + REGISTER, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const MCP_CLIENT = {
  client_name: 'Test MCP Client',
  client_uri: 'https://mcp-client.example.org/about',
  logo_uri: 'https://mcp-client.example.org/logo.png',
  redirect_uris: ['http://127.0.0.1:8765/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  scope: 'read:documents',
  software_id: 'ignored-unknown-field',
};

describe('dynamic client registration (policy open)', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    web = await loggedIn(d, alice);
  });

  it('registers a public loopback client, which then completes authorize (any loopback port) and a PKCE exchange', async () => {
    const reg = await register(d, MCP_CLIENT);
    expect(reg.status).toBe(201);
    expect(reg.headers.get('cache-control')).toBe('no-store');
    expect(reg.body).toEqual({
      client_id: expect.stringMatching(/^app_/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Test MCP Client',
      client_uri: 'https://mcp-client.example.org/about',
      redirect_uris: ['http://127.0.0.1:8765/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'read:documents write:documents',
    });
    expect(Math.abs(reg.body.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60);

    const redirect = 'http://127.0.0.1:49152/callback'; // RFC 8252 §7.3: another port than the registered one
    const { verifier, challenge } = pkce();
    const params = { client_id: reg.body.client_id, redirect_uri: redirect, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', resource: `${d.url}/mcp` };
    const { consent, redirect: back } = await decide(web, params, 'approve');
    expect(consent.text).toContain('registered itself with this server (Dynamic Client Registration)');
    expect(consent.text).toContain('docsearch has not verified it');
    expect(consent.text).toContain('<code class="client-uri-host">mcp-client.example.org</code>');
    expect(consent.text).toContain('<code class="redirect-host">127.0.0.1:49152</code>');
    expect(consent.text).not.toContain('logo.png');
    const code = back.searchParams.get('code')!;
    const res = await post(d, TOKEN, { grant_type: 'authorization_code', code, client_id: reg.body.client_id, redirect_uri: redirect, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toMatch(HEX64);
    // Bound to /mcp: not a REST API token.
    expect((await api(d, '/api/v1/projects', { token: res.body.access_token })).status).toBe(401);

    // Public: PKCE is required.
    const noPkce = await web.get(authorizePath({ client_id: reg.body.client_id, redirect_uri: redirect, response_type: 'code' }));
    expect(noPkce.status).toBe(400);
    expect(noPkce.text).toContain('PKCE is required for public clients');

    // RFC 8252 §7.3: only the port varies; another path, host or query is not the registered URI.
    for (const other of ['http://127.0.0.1:49152/other', 'http://127.0.0.1:49152/callback/x', 'http://[::1]:49152/callback', 'http://127.0.0.1:49152/callback?next=/']) {
      const res = await web.get(authorizePath({ ...params, redirect_uri: other }));
      expect(res.status, other).toBe(400);
      expect(res.location, other).toBeNull();
      expect(res.text, other).toContain('<code class="oauth-error">invalid_redirect_uri</code>');
    }
  });

  it('never redirects an error to a self-registered client’s URI: it shows a page', async () => {
    const reg = await register(d, { ...MCP_CLIENT, redirect_uris: ['https://attacker.example.net/cb'] });
    expect(reg.status).toBe(201);
    const res = await web.get(authorizePath({ client_id: reg.body.client_id, redirect_uri: 'https://attacker.example.net/cb', response_type: 'code', scope: 'admin' }));
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.text).toContain('invalid_scope');
  });

  it('registers a confidential client: the secret is returned once and authenticates at the token endpoint', async () => {
    const redirect = 'https://app.example.org/oauth/cb';
    const reg = await register(d, { client_name: 'Server App', redirect_uris: [redirect], token_endpoint_auth_method: 'client_secret_post' });
    expect(reg.status).toBe(201);
    expect(reg.body.client_secret).toMatch(/^dscs_[0-9A-Za-z]{43}$/);
    expect(reg.body.client_secret_expires_at).toBe(0);
    expect(reg.body.token_endpoint_auth_method).toBe('client_secret_post');
    const basic = await register(d, { client_name: 'Default Method', redirect_uris: [redirect] });
    expect(basic.body.token_endpoint_auth_method).toBe('client_secret_basic');
    expect(basic.body.client_secret).toMatch(/^dscs_/);

    // Self-registered: PKCE S256 is required even of a confidential client (docs/mcp.md), and the error is a page.
    const noPkce = await web.get(authorizePath({ client_id: reg.body.client_id, redirect_uri: redirect, response_type: 'code' }));
    expect(noPkce.status).toBe(400);
    expect(noPkce.location).toBeNull();
    expect(noPkce.text).toContain('PKCE is required for clients that registered themselves: send code_challenge and code_challenge_method=S256');
    const { verifier, challenge } = pkce();
    const code = await getCode(web, { client_id: reg.body.client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256' });
    const wrong = await post(d, TOKEN, { grant_type: 'authorization_code', code, client_id: reg.body.client_id, client_secret: 'dscs_wrong', redirect_uri: redirect, code_verifier: verifier });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const ok = await post(d, TOKEN, { grant_type: 'authorization_code', code, client_id: reg.body.client_id, client_secret: reg.body.client_secret, redirect_uri: redirect, code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: ok.body.access_token })).status).toBe(200);
  });

  it('refuses bad metadata with RFC 7591 errors', async () => {
    const cases: [unknown, string, string][] = [
      [{ redirect_uris: ['http://example.com/cb'] }, 'invalid_redirect_uri', 'redirect URI "http://example.com/cb" must use https (http is allowed only for 127.0.0.1, [::1] and localhost)'],
      [{ redirect_uris: ['https://app.example.org/cb#frag'] }, 'invalid_redirect_uri', 'redirect URI "https://app.example.org/cb#frag" must not contain a fragment (#)'],
      [{ client_name: 'No URIs' }, 'invalid_redirect_uri', 'redirect_uris is required: at least one redirect URI'],
      [{ redirect_uris: 'https://app.example.org/cb' }, 'invalid_client_metadata', 'redirect_uris must be an array of strings'],
      [{ redirect_uris: ['https://a.example.org/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata', 'grant_types client_credentials not supported (supported: authorization_code, refresh_token)'],
      [{ redirect_uris: ['https://a.example.org/cb'], response_types: ['token'] }, 'invalid_client_metadata', 'response_types must be ["code"]'],
      [{ redirect_uris: ['https://a.example.org/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method private_key_jwt is not supported (supported: none, client_secret_post, client_secret_basic)'],
      [{ redirect_uris: ['https://a.example.org/cb'], scope: 'read:documents admin' }, 'invalid_client_metadata', 'unknown scope: admin (supported: read:documents write:documents)'],
      [{ redirect_uris: ['https://a.example.org/cb'], client_name: 'x'.repeat(101) }, 'invalid_client_metadata', 'client_name must be at most 100 characters'],
      [{ redirect_uris: ['https://a.example.org/cb'], client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', 'client_uri must be an http or https URL'],
      ['[1,2]', 'invalid_client_metadata', 'the client metadata must be a JSON object'],
      ['{not json', 'invalid_client_metadata', 'the request body is not valid JSON'],
    ];
    for (const [body, error, description] of cases) {
      const res = await register(d, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error, error_description: description });
    }
    const form = await fetch(d.url + REGISTER, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'redirect_uris=x' });
    expect(form.status).toBe(400);
    expect(await form.json()).toEqual({ error: 'invalid_client_metadata', error_description: 'the request body must be application/json' });
    const big = await register(d, { redirect_uris: ['https://a.example.org/cb'], padding: 'x'.repeat(17 * 1024) });
    expect(big.status).toBe(400);
    expect(big.body).toEqual({ error: 'invalid_client_metadata', error_description: 'the request body is larger than 16kb' });
  });
});

describe('dynamic client registration (policy users)', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;

  daemonForSuite(
    async (started) => {
      d = started;
      [alice, bob] = [await addUser(d), await addUser(d)];
    },
    { args: ['--client-registration', 'users'] },
  );

  it('needs an account’s credential, and the client is that account’s alone', async () => {
    const anonymous = await register(d, MCP_CLIENT);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('invalid_token');
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="docsearch"');
    const forged = await register(d, MCP_CLIENT, { authorization: 'Bearer dsk_notarealkey' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const reg = await register(d, MCP_CLIENT, { authorization: `Bearer ${alice.apiKey}` });
    expect(reg.status).toBe(201);
    const { challenge } = pkce();
    const params = { client_id: reg.body.client_id, redirect_uri: MCP_CLIENT.redirect_uris[0], response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
    const asBob = await (await loggedIn(d, bob)).get(authorizePath(params));
    expect(asBob.status).toBe(400);
    expect(asBob.location).toBeNull();
    expect(asBob.text).toContain('this application registered itself with another account, and only that account can authorize it');
    const asAlice = await (await loggedIn(d, alice)).get(authorizePath(params));
    expect(asAlice.status).toBe(200);
    expect(consentFields(asAlice.text).client_id).toBe(reg.body.client_id);
  });

  it('limits registrations per client address: 429 with Retry-After', async () => {
    let refused: Awaited<ReturnType<typeof register>> | undefined;
    let accepted = 0;
    for (let i = 0; i < 25 && !refused; i++) {
      const res = await register(d, MCP_CLIENT, { authorization: `Bearer ${alice.apiKey}` });
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(201);
        accepted++;
      }
    }
    expect(refused).toBeDefined();
    // 20 an hour per address, counting the attempts of the test above.
    expect(accepted).toBeGreaterThan(10);
    expect(refused!.body.error).toBe('too_many_requests');
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  });
});

describe('dynamic client registration (policy off)', () => {
  let d: Daemon;
  let web: WebClient;

  daemonForSuite(
    async (started) => {
      d = started;
      web = await loggedIn(d, await addUser(d));
    },
    { args: ['--client-registration', 'off'] },
  );

  it('refuses registration and metadata-document client ids', async () => {
    const res = await register(d, MCP_CLIENT);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'access_denied', error_description: 'this server does not accept self-registered clients; ask its operator to register the application' });
    const { challenge } = pkce();
    const page = await web.get(
      authorizePath({ client_id: 'https://client.example.org/oauth/metadata.json', redirect_uri: 'http://127.0.0.1:1/cb', response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    expect(page.status).toBe(400);
    expect(page.text).toContain('this server does not accept self-registered clients');
    const token = await post(d, TOKEN, { grant_type: 'authorization_code', code: 'x', client_id: 'https://client.example.org/oauth/metadata.json', redirect_uri: 'http://127.0.0.1:1/cb' });
    expect(token.status).toBe(401);
    expect(token.body.error).toBe('invalid_client');
  });
});

describe('the consent page of a client that named itself (security probe, finding 10)', () => {
  const suite = signedInSuite();

  it('warns of a name that could pass for another, shows where the client comes from, and keeps its marks in their box', async () => {
    // The security probe's finding 10: homoglyph, zero-width and combining-mark names reached the consent page as they were.
    const cases: [string, string][] = [
      ['d\u043ecsearch CLI (\u043efficial)', 'mixes Latin and Cyrillic letters'],
      ['\u0455\u0441\u043e\u0440\u0435', 'uses letters that only look like Latin ones (it reads as “scope”)'],
      ['doc\u200bsearch CLI', 'contains invisible characters'],
      [`Z${'\u0301'.repeat(99)}`, 'stacks many marks on one letter'],
    ];
    for (const [name, concern] of cases) {
      const reg = await register(suite.d, { ...MCP_CLIENT, client_name: name });
      expect(reg.status, name).toBe(201);
      const { challenge } = pkce();
      const page = await suite.web.get(authorizePath({ client_id: reg.body.client_id, redirect_uri: 'http://127.0.0.1:8765/callback', response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(page.status, name).toBe(200);
      expect(page.text, name).toContain(`<strong>Careful:</strong> this application's name ${concern}.`);
      expect(page.text, name).toContain('Judge it by where it comes from: <strong><code class="origin">127.0.0.1:8765</code></strong>');
      expect(page.text).toContain('<p class="client-origin">From <strong><code class="origin">127.0.0.1:8765</code></strong></p>');
      expect(page.text).not.toContain('\u200b');
      expect(page.text).not.toMatch(/\p{M}{3}/u);
    }
    const plain = await register(suite.d, { ...MCP_CLIENT, client_name: 'Plain Notes 📝' });
    const { challenge } = pkce();
    const page = await suite.web.get(authorizePath({ client_id: plain.body.client_id, redirect_uri: 'http://127.0.0.1:8765/callback', response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(page.text).toContain('Authorize <bdi class="app-name">Plain Notes 📝</bdi>?');
    expect(page.text).not.toContain('Careful:');
  });
});
