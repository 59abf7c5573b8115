import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type Daemon, removeDir, runCli } from '../helpers/daemon.js';
import { startIdp, type TestIdp } from '../helpers/oidc-provider.js';
import { newKeyOnPage, WebClient } from './web-client.js';
import { startAuthSmtpServer, type AuthSmtpServer } from './smtp-auth-server.js';
import { enrolTotp, totpCode } from '../auth/two-factor/totp.js';
import { getCode, HEX64, pkce, post } from '../auth/oauth-flow.js';
import { CLIENT_SECRET as OIDC_CLIENT_SECRET, registerDaemons, ssoDaemon, startSso } from '../auth/sso/sso-flow.js';

const EMAIL = 'secret-keeper@example.com';
const PASSWORD = 'Pa55word-that-must-never-leak';
const CI_PASSWORD = 'ci-Password-also-never-logged';
const SMTP_USER = 'docsearch-mailer';
const SMTP_PASSWORD = 'smtp-Pa55word-in-the-config-7f3a9c';
const OAUTH_REDIRECT = 'https://app.example.org/oauth/cb';

/** The raw bytes of the SQLite database and its WAL/SHM files. */
function sqliteFiles(dataDir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const f of readdirSync(dataDir)) if (f.startsWith('docsearch.db')) out.set(f, readFileSync(join(dataDir, f)));
  return out;
}

// Text logs (`--log-format text`, a terminal's by default) are made from the redacted JSON: the same scenario holds for both.
describe.each([
  { format: 'json', args: [] },
  { format: 'text', args: ['--log-format', 'text'] },
])('no secret in $format logs or in the database file', ({ format, args }) => {
  let d: Daemon;
  let idp: TestIdp;
  let smtp: AuthSmtpServer;
  const secrets = new Map<string, string>();
  let setupToken = '';
  let apiKeyHash = '';
  let clientSecretHash = '';

  beforeAll(async () => {
    // Secrets given to the daemon as configuration, each used below: a mail server that wants a password, and an
    // OpenID Provider that wants the client secret at its token endpoint (through the environment, as sso-flow.ts).
    smtp = await startAuthSmtpServer(SMTP_USER, SMTP_PASSWORD);
    idp = await startIdp();
    d = await ssoDaemon(idp, ['--log-level', 'trace', '--smtp-url', smtp.url, ...args]);
    registerDaemons(idp, [d]);
    secrets.set('SMTP password', SMTP_PASSWORD);
    secrets.set('OIDC client secret', OIDC_CLIENT_SECRET);
    setupToken = new URL(d.setupUrl!).searchParams.get('token')!;
    secrets.set('setup token', setupToken);
    secrets.set('password', PASSWORD);

    // First account through the setup link.
    const web = new WebClient(d);
    await web.get(`/setup?token=${setupToken}`);
    secrets.set('anonymous session cookie', web.sessionCookie!);
    secrets.set('csrf token', web.csrf);
    expect((await web.post('/setup', { _csrf: web.csrf, token: setupToken, email: EMAIL, password: PASSWORD })).status).toBe(302);
    secrets.set('setup session cookie', web.sessionCookie!);
    // The used link, a failed login, a good one, a key from the page, logout.
    await web.get(`/setup?token=${setupToken}`);
    const again = new WebClient(d);
    expect((await again.login(EMAIL, `${PASSWORD}-wrong`)).status).toBe(401);
    expect((await again.login(EMAIL, PASSWORD)).status).toBe(302);
    secrets.set('login session cookie', again.sessionCookie!);
    await again.get('/settings/keys');
    const page = await again.submit('/settings/keys', { _csrf: again.csrf, name: 'page key', scopes: ['read:documents', 'write:documents'] });
    const pageKey = newKeyOnPage(page.text)!;
    secrets.set('key from the page', pageKey);
    apiKeyHash = createHash('sha256').update(pageKey).digest('hex');

    // Keys through the API, used, revoked, and presented after revocation.
    const created = await api(d, '/api/v1/keys', { token: pageKey, body: { name: 'api key' } });
    expect(created.status).toBe(201);
    secrets.set('key from the API', created.body.key);
    expect((await api(d, '/api/v1/projects', { token: created.body.key })).status).toBe(200);
    expect((await api(d, `/api/v1/keys/${created.body.id}`, { method: 'DELETE', token: pageKey })).status).toBe(204);
    expect((await api(d, '/api/v1/projects', { token: created.body.key })).status).toBe(401);
    expect((await api(d, `/api/v1/projects?cursor=${pageKey}`, { token: pageKey })).status).toBe(400);
    expect((await api(d, '/api/v1/projects', { token: pageKey, body: { name: pageKey.slice(0, 10), bogus: pageKey } })).status).toBe(400);

    // A CI account provisioned by the operator command.
    const ci = await runCli(['users', 'add', 'ci@example.com', '--data-dir', d.dataDir, '--api-key'], { input: `${CI_PASSWORD}\n` });
    expect(ci.code).toBe(0);
    secrets.set('CI password', CI_PASSWORD);
    secrets.set('CI key', ci.stdout.trim());
    expect((await api(d, '/api/v1/projects', { token: ci.stdout.trim() })).status).toBe(200);
    expect(ci.stdout.trim()).toMatch(/^dsk_/);
    expect(ci.stderr).not.toContain(CI_PASSWORD);

    // OAuth: a confidential client registers itself (its dscs_ secret, answered once), the account authorizes it
    // (PKCE), the code is exchanged (client_secret_post), the access token used, a refresh round (HTTP Basic), then
    // the spent secrets presented again: a revoked access token, the rotated refresh token, the used code.
    const reg = await api(d, '/api/oauth/register', { body: { client_name: 'Secret Keeper App', redirect_uris: [OAUTH_REDIRECT], token_endpoint_auth_method: 'client_secret_post' } });
    expect(reg.status).toBe(201);
    const client = { id: reg.body.client_id as string, secret: reg.body.client_secret as string };
    expect(client.secret).toMatch(/^dscs_/);
    secrets.set('registered client secret', client.secret);
    clientSecretHash = createHash('sha256').update(client.secret).digest('hex');
    const { verifier, challenge } = pkce();
    secrets.set('PKCE code verifier', verifier);
    const oauthCode = await getCode(again, { client_id: client.id, redirect_uri: OAUTH_REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'kept-state' });
    secrets.set('OAuth authorization code', oauthCode);
    const exchange = () =>
      post(d, '/api/oauth/token', { grant_type: 'authorization_code', code: oauthCode, client_id: client.id, client_secret: client.secret, redirect_uri: OAUTH_REDIRECT, code_verifier: verifier });
    const tokens = await exchange();
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toMatch(HEX64);
    secrets.set('OAuth access token', tokens.body.access_token);
    secrets.set('OAuth refresh token', tokens.body.refresh_token);
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(200);
    const refreshed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, { basic: [client.id, client.secret] });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    secrets.set('refreshed access token', refreshed.body.access_token);
    secrets.set('refreshed refresh token', refreshed.body.refresh_token);
    expect((await api(d, '/api/v1/projects', { token: refreshed.body.access_token })).status).toBe(200);
    expect((await post(d, '/api/oauth/revoke', { token: refreshed.body.access_token, client_id: client.id, client_secret: client.secret }, { as: 'form' })).status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: refreshed.body.access_token })).status).toBe(401);
    const reused = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: client.id, client_secret: client.secret });
    expect(reused.body.error).toBe('invalid_grant');
    const replayed = await exchange();
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');

    // Mail through the server that wants the password: a test mail, and a password reset link (a secret itself) for
    // the CI account, opened from the mail.
    const queued = await api(d, '/api/v1/admin/mail/test', { token: pageKey, body: {} });
    expect(queued.status).toBe(202);
    await smtp.waitFor(EMAIL);
    const reset = await api(d, `/api/v1/admin/users/${encodeURIComponent('ci@example.com')}/reset-link`, { token: pageKey, body: { send: true } });
    expect(reset.status).toBe(201);
    expect(reset.body).toMatchObject({ link: null, mailed: true });
    const resetMail = await smtp.waitFor('ci@example.com');
    const resetToken = /\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(resetMail)?.[1];
    expect(resetToken, resetMail).toBeDefined();
    secrets.set('password reset token', resetToken!);
    expect((await new WebClient(d).get(`/reset-password?token=${resetToken}`)).status).toBe(200);
    // The daemon logged in with the configured password (nothing is taken without it) and logged what it sent.
    expect(smtp.refused).toBe(0);
    expect(smtp.authArguments.length).toBeGreaterThan(0);
    smtp.authArguments.forEach((arg, i) => secrets.set(`SMTP AUTH argument ${i + 1} (base64)`, arg));
    await d.logLine((l) => l.includes(queued.body.id) && l.includes('sent a mail (test)'));
    await d.logLine((l) => l.includes('sent a mail (password_reset)'));

    // An authenticator app set up (its key and recovery codes shown once), then signed in with a code and a recovery code.
    const { secret, recoveryCodes } = await enrolTotp(again);
    secrets.set('authenticator key', secret);
    recoveryCodes.forEach((code, i) => secrets.set(`recovery code ${i + 1}`, code));
    const code = totpCode(secret, 1);
    secrets.set('authenticator code', code);
    for (const second of [code, recoveryCodes[0]!]) {
      const web = new WebClient(d);
      await web.login(EMAIL, PASSWORD);
      await web.get('/login/verify');
      expect((await web.post('/login/verify', { _csrf: web.csrf, code: second, return_to: '' })).status).toBe(303);
      secrets.set(`session cookie after ${second === code ? 'a code' : 'a recovery code'}`, web.sessionCookie!);
    }

    // A sign-in through the OpenID Provider: the daemon redeems the provider's code with the configured client secret.
    idp.accounts.set('sso-person', { email: 'sso-person@example.org', email_verified: true });
    const sso = new WebClient(d);
    const started = await startSso(sso);
    expect(started.status).toBe(303);
    expect(started.location!.startsWith(idp.issuer)).toBe(true);
    const back = await idp.signIn(started.location!, 'sso-person');
    const providerCode = back.searchParams.get('code');
    expect(providerCode).toBeTruthy();
    secrets.set("the OpenID Provider's authorization code", providerCode!);
    expect((await sso.get(back.pathname + back.search)).status).toBe(302);
    secrets.set('session cookie after a sign-in through the provider', sso.sessionCookie!);
    expect((await sso.get('/projects')).text).toContain('sso-person@example.org');

    const out = await again.post('/logout', { _csrf: again.csrf });
    expect(out.status).toBe(302);
    // The last request's log line (JSON or text) closes the scenario: every line before it is here too.
    await d.logLine((l) => (l.includes('"msg":"request"') && l.includes('"path":"/logout"')) || l.includes('POST /logout 302'));
  });

  /** The names of the secrets `text` holds (every one named, not only the first, when a test fails). */
  const found = (text: string) => [...secrets].filter(([, value]) => text.includes(value)).map(([what]) => what);

  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await smtp?.stop();
    await idp?.stop();
  });

  it(`the scenario produced ${format} logs at trace level`, () => {
    const lines = d.stdout().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(15);
    if (format === 'json') for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    else for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/);
  });

  it('the logs on stdout hold none of the secrets', () => {
    const out = d.stdout();
    expect(found(out)).toEqual([]);
    expect(out).not.toContain('/setup?token=');
    if (format === 'json') {
      // Positive control: the configuration holding two of the secrets was logged (masked), not left out.
      const config = JSON.parse(d.stdout().split('\n').find((l) => l.includes('"msg":"listening"'))!).config;
      expect(config.smtpUrl).toBe(`smtp://${SMTP_USER}:***@127.0.0.1:${smtp.port}`);
      expect(config.oidcClientSecret).toBe('[redacted]');
    }
  });

  it('stderr holds the setup link exactly once (the operator notice) and no other secret', () => {
    const err = d.stderr();
    expect(err.split(setupToken).length - 1).toBe(1);
    expect(found(err).filter((what) => what !== 'setup token')).toEqual([]);
  });

  it('the SQLite files (db, -wal, -shm) hold no secret in clear text, only hashes', async () => {
    const check = () => {
      const files = sqliteFiles(d.dataDir);
      expect([...files.keys()]).toContain('docsearch.db');
      const all = Buffer.concat([...files.values()]);
      // Positive control: we are reading the right bytes.
      expect(all.includes(Buffer.from(EMAIL)), 'email present').toBe(true);
      expect(all.includes(Buffer.from(apiKeyHash)), 'key hash present').toBe(true);
      expect([...files].flatMap(([name, bytes]) => [...secrets].filter(([, value]) => bytes.includes(Buffer.from(value))).map(([what]) => `${what} in ${name}`))).toEqual([]);
      // And the registered client's secret is kept, as its hash (after the check above, which names a secret kept in clear).
      expect(all.includes(Buffer.from(clientSecretHash)), 'client secret hash present').toBe(true);
    };
    check(); // while the daemon runs (recent writes sit in the WAL)
    expect(await d.stop()).toBe(0);
    check(); // after shutdown checkpointed the WAL
  });
});
