import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv, cliSuite, unusedUrl } from './cli-env.js';
import { browserLogin } from './browser-login.js';

describe('docsearch login / whoami / logout', () => {
  let d: Daemon;
  let user: TestUser;
  cliSuite((s) => ({ d, user } = s));

  it('without a credential exits 4 with the hint to run `docsearch login`', async () => {
    const res = await runCli(['projects', 'list'], { env: cliEnv(d) });
    expect(res.code).toBe(4);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`error: not logged in to ${d.url}\nhint: run \`docsearch login\` (or set DOCSEARCH_TOKEN to an API key)\n`);
  });

  it('a rejected token exits 4 with the server message and the login hint', async () => {
    const res = await runCli(['projects'], { env: cliEnv(d, { DOCSEARCH_TOKEN: `dsk_${'x'.repeat(43)}` }) });
    expect(res.code).toBe(4);
    expect(res.stderr).toBe(
      'error: GET /api/v1/projects: the credential is not valid, has expired or was revoked\nhint: run `docsearch login` (or set DOCSEARCH_TOKEN to an API key)\n',
    );
  });

  it('an unreachable server is one line naming the URL', async () => {
    // A port that was free a moment ago: nothing listens there.
    const url = await unusedUrl();
    const res = await runCli(['projects'], { env: cliEnv(null, { DOCSEARCH_URL: url.replace('http://', ''), DOCSEARCH_TOKEN: user.apiKey }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`error: could not reach ${url} (ECONNREFUSED) — is \`docsearch serve\` running?\nhint: check --server or DOCSEARCH_URL\n`);
  });

  it('whoami says when the API key in use expires', async () => {
    const made = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'expiring', expires_in_days: 7 } });
    const env = cliEnv(null, { DOCSEARCH_URL: d.url, DOCSEARCH_TOKEN: made.body.key });
    expect(JSON.parse((await runCli(['whoami', '--json'], { env })).stdout)).toMatchObject({ method: 'API key', expires_at: made.body.expires_at });
    expect((await runCli(['whoami'], { env })).stdout).toContain(`\nexpires\t${made.body.expires_at}\n`);
  });

  it('--with-token verifies the key, stores it in a 0600 file with one warning, and whoami reports it', async () => {
    const env = cliEnv(null);
    const login = await runCli(['login', '--server', d.url, '--with-token'], { env, input: `${user.apiKey}\n` });
    expect(login.code).toBe(0);
    // It says which account the key is.
    expect(login.stderr).toContain(`Logged in to ${d.url} as ${user.email} (token).`);
    const file = join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json');
    const warnings = login.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toEqual([`warning: DOCSEARCH_CREDENTIALS=file: storing credentials in plain text in ${file} (mode 0600)`]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8')).servers[d.url]).toEqual({ type: 'token', access_token: user.apiKey });

    // The server became the default: no --server, no DOCSEARCH_URL.
    const who = await runCli(['whoami', '--json'], { env });
    expect(who.code).toBe(0);
    const info = JSON.parse(who.stdout);
    const admin = (await api(d, '/api/v1/me', { token: user.apiKey })).body.admin as boolean;
    expect(info).toEqual({
      server: d.url,
      server_source: 'saved default',
      verified: true,
      account: { id: expect.stringMatching(/^usr_/), email: user.email },
      method: 'API key',
      credential_source: 'file',
      scopes: ['read:documents', 'write:documents'],
      admin,
      project_ids: null,
      expires_at: null,
    });
    expect(who.stdout).not.toContain(user.apiKey);
    expect(who.stderr).toBe('');

    const plain = await runCli(['whoami'], { env });
    expect(plain.stdout).toBe(`server\t${d.url} (saved default)\naccount\t${user.email}\nauthenticated by\tAPI key from file\nscopes\tread:documents write:documents\nadmin\t${admin ? 'yes' : 'no'}\nprojects\tevery project the account may read\n`);
    expect((await runCli(['whoami', '--show-token'], { env })).stdout).toBe(`${user.apiKey}\n`);

    const out = await runCli(['logout'], { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(`Logged out of ${d.url}. The API key itself still works`);
    // Forgotten on this machine: the key is no longer in the file.
    expect(JSON.parse(readFileSync(file, 'utf8')).servers).toEqual({});
    expect(readFileSync(file, 'utf8')).not.toContain(user.apiKey);
    expect((await runCli(['whoami'], { env })).code).toBe(4);
    // Forgetting locally did not revoke the key.
    expect((await api(d, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
  });

  it('--with-token refuses a key the server rejects and stores nothing', async () => {
    const env = cliEnv(null);
    const res = await runCli(['login', '--server', d.url, '--with-token'], { env, input: `dsk_${'y'.repeat(43)}\n` });
    expect(res.code).toBe(4);
    expect(res.stderr).toBe(`error: ${d.url} rejected the token\nhint: check that you pasted the whole key (dsk_…) and that it was not revoked\n`);
    expect(() => statSync(join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json'))).toThrow();
  });

  it('--with-token with empty stdin is a usage error', async () => {
    const res = await runCli(['login', '--server', d.url, '--with-token'], { env: cliEnv(null), input: '' });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: --with-token reads the token from stdin, and stdin was empty');
  });

  it('browser login: loopback redirect with PKCE and state, driven by a logged-in HTTP session; then logout revokes', async () => {
    const env = cliEnv(null);
    const { authorizeUrl, consent, landing, code, stdout, stderr } = await browserLogin(d, user, env);
    const q = new URL(authorizeUrl).searchParams;
    expect(q.get('client_id')).toBe('docsearch-cli');
    expect(q.get('response_type')).toBe('code');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(q.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(q.get('scope')).toBe('read:documents write:documents manage:keys');
    expect(consent).toContain('docsearch');
    expect(landing).toContain('Logged in');
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toContain(`Logged in to ${d.url} as ${user.email} (browser login; scopes: read:documents write:documents manage:keys)`);

    const file = join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')).servers[d.url];
    expect(stored.type).toBe('oauth');
    expect(stored.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const projects = await runCli(['projects', '--json'], { env });
    expect(projects.code).toBe(0);
    expect(JSON.parse(projects.stdout).projects.map((p: { name: string }) => p.name)).toContain('default');

    // An access token about to expire is renewed with the refresh token before use (and the rotated pair saved).
    const creds = JSON.parse(readFileSync(file, 'utf8'));
    creds.servers[d.url].expires_at = Date.now() + 10_000;
    writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
    const again = await runCli(['whoami', '--json'], { env });
    expect(again.code).toBe(0);
    const renewed = JSON.parse(readFileSync(file, 'utf8')).servers[d.url];
    expect(renewed.access_token).not.toBe(stored.access_token);
    expect(renewed.refresh_token).not.toBe(stored.refresh_token);
    expect(renewed.expires_at).toBeGreaterThan(Date.now() + 3_000_000);

    const out = await runCli(['logout'], { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe(`Logged out of ${d.url} (revoked on the server).\n`);
    expect((await api(d, '/api/v1/projects', { token: renewed.access_token })).status).toBe(401);
    expect((await runCli(['projects'], { env })).code).toBe(4);
  });

  it('a stored login whose refresh fails exits 4 with the login hint', async () => {
    const env = cliEnv(null);
    await runCli(['login', '--server', d.url, '--with-token'], { env, input: user.apiKey });
    const file = join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json');
    const creds = { servers: { [d.url]: { type: 'oauth', access_token: 'a'.repeat(64), refresh_token: 'b'.repeat(64), expires_at: Date.now() - 1000 } } };
    writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
    const res = await runCli(['projects'], { env });
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(new RegExp(`^error: your login to ${d.url.replace(/[.]/g, '\\.')} expired and could not be renewed \\(token request failed: invalid_grant.*\\)\\nhint: run \`docsearch login\``));
  });
});
