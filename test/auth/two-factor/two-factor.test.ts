/**
 * Two-factor sign-in over HTTP (issue 52): setting up an authenticator app, the second step of a password sign-in
 * (form field `code`), codes refused when wrong or used before, recovery codes once each, codes throttled like
 * passwords, sessions a password alone opened ended, and the operator's reset. The browser suite
 * (test/web/two-factor.browser.test.ts) walks the same in Chromium, with passkeys.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { freePort } from '../../helpers/ports.js';
import { WebClient } from '../../server/web-client.js';
import { browserLogin } from '../../cli/browser-login.js';
import { cliEnv } from '../../cli/cli-env.js';
import { authorizePath, pkce } from '../oauth-flow.js';
import { enrolTotp, totpCode } from './totp.js';

/**
 * Each test signs in from an address of its own (the daemons trust X-Forwarded-For): codes count against the
 * address as passwords do, and one test's wrong codes must not lock the next one out.
 */
let addresses = 0;
let address = '';
const newAddress = () => (address = `198.51.100.${++addresses}`);

function browser(d: Daemon): WebClient {
  const web = new WebClient(d);
  web.headers['x-forwarded-for'] = address;
  return web;
}

/** A browser signed in by password alone (the account has no second factor yet). */
async function loggedIn(d: Daemon, user: TestUser): Promise<WebClient> {
  const web = browser(d);
  const res = await web.login(user.email, user.password);
  if (res.status !== 302) throw new Error(`login failed: ${res.status}`);
  return web;
}

/** Signs in with the password: the answer, and the client (on its second step when the account has a factor). */
async function passwordStep(d: Daemon, user: TestUser, returnTo = ''): Promise<{ web: WebClient; res: Awaited<ReturnType<WebClient['post']>> }> {
  const web = browser(d);
  await web.get('/login');
  const res = await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: returnTo });
  return { web, res };
}

async function codeStep(web: WebClient, code: string) {
  await web.get('/login/verify');
  return web.post('/login/verify', { _csrf: web.csrf, code, return_to: '' });
}

describe('two-factor sign-in with an authenticator app', () => {
  let d: Daemon;
  let admin: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d);
    },
    { args: ['--trust-proxy'] },
  );
  beforeEach(newAddress);

  it('sets up with one valid code, then asks for a code after the password; a wrong or reused code is refused', async () => {
    const user = await addUser(d);
    const web = await loggedIn(d, user);
    const other = await loggedIn(d, user); // a second browser, signed in by password alone
    await web.get('/settings/security');
    await web.post('/settings/security/totp/start', { _csrf: web.csrf });
    const page = await web.get('/settings/security');
    expect(page.text).toContain('src="data:image/svg+xml;base64,');
    const uri = /id="totp-uri" href="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect(uri).toMatch(/^otpauth:\/\/totp\/docsearch%20\(127\.0\.0\.1%3A\d+\):/);
    const secret = new URL(uri).searchParams.get('secret')!;
    // A wrong code does not turn it on.
    const wrong = await web.submit('/settings/security/totp', { _csrf: web.csrf, code: '000000' === totpCode(secret) ? '111111' : '000000' });
    // Said after a 303 to the page (Post/Redirect/Get), its status kept.
    expect(wrong.redirectedFrom).toMatchObject({ status: 303, location: '/settings/security' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That code is not right');
    const enrolCode = totpCode(secret);
    const on = await web.submit('/settings/security/totp', { _csrf: web.csrf, code: enrolCode });
    expect(on.redirectedFrom?.status).toBe(303);
    expect(on.text).toContain('Signed out 1 other session');
    expect([...on.text.matchAll(/<li><code>[0-9a-z-]{19}<\/code><\/li>/g)]).toHaveLength(10);
    // Shown once: the page again has no codes.
    expect((await web.get('/settings/security')).text).not.toContain('id="recovery-codes"');
    expect((await web.get('/settings/security')).text).toContain('10 of 10 left');
    // The session that set it up goes on; the one a password alone opened is over.
    expect((await web.get('/settings/keys')).status).toBe(200);
    expect((await other.get('/settings/keys')).location).toMatch(/^\/login/);

    const first = await passwordStep(d, user, '/settings/keys');
    expect(first.res.status).toBe(303);
    expect(first.res.location).toBe('/login/verify?return_to=%2Fsettings%2Fkeys');
    // Half signed in: nothing but the second step.
    expect((await first.web.get('/settings/keys')).location).toMatch(/^\/login\?/);
    expect((await codeStep(first.web, '12345')).status).toBe(401);
    // The code that set it up was used: the same time step is never accepted again.
    const reused = await codeStep(first.web, enrolCode);
    expect(reused.status).toBe(401);
    expect(reused.text).toContain('a code works once');
    const next = totpCode(secret, 1);
    const ok = await first.web.post('/login/verify', { _csrf: first.web.csrf, code: next, return_to: '/settings/keys' });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/settings/keys');
    expect((await first.web.get('/settings/keys')).status).toBe(200);
    const sessions = (await first.web.get('/settings/security')).text;
    expect(sessions).toContain('with password and authenticator code');

    // That code is spent too, for any other sign-in.
    const again = await passwordStep(d, user);
    expect((await codeStep(again.web, next)).status).toBe(401);
  });

  it("takes `docsearch login`'s browser through the same second step before its consent", async () => {
    const user = await addUser(d);
    const { secret } = await enrolTotp(await loggedIn(d, user));
    const login = await browserLogin(d, user, cliEnv(null), [], async (authorizeUrl) => {
      const web = browser(d);
      const path = authorizeUrl.slice(d.url.length);
      const toLogin = await web.get(path);
      expect(toLogin.location).toBe(`/login?return_to=${encodeURIComponent(path)}`);
      await web.get(toLogin.location!);
      const password = await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: path });
      expect(password.location).toBe(`/login/verify?return_to=${encodeURIComponent(path)}`);
      // Owing the code, the authorize URL sends it to sign in again: no consent page yet.
      expect((await web.get(path)).location).toMatch(/^\/login\?/);
      await web.get(password.location!);
      const verified = await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: path });
      expect(verified.location).toBe(path);
      return web;
    });
    expect(login.consent).toContain('name="decision"');
    expect(login.code, login.stderr).toBe(0);
  });

  it('accepts each recovery code once, in place of a code', async () => {
    const user = await addUser(d);
    const { recoveryCodes } = await enrolTotp(await loggedIn(d, user));
    const one = await passwordStep(d, user);
    const used = await codeStep(one.web, recoveryCodes[3]!.toUpperCase().replace(/-/g, ' '));
    expect(used.status).toBe(303);
    expect((await one.web.get('/settings/security')).text).toContain('9 of 10 left');
    const two = await passwordStep(d, user);
    expect((await codeStep(two.web, recoveryCodes[3]!)).status).toBe(401);
    expect((await codeStep(two.web, recoveryCodes[4]!)).status).toBe(303);
  });

  it('counts codes like passwords: the sixth wrong one in 15 minutes is refused with 429', async () => {
    const user = await addUser(d);
    const { secret } = await enrolTotp(await loggedIn(d, user));
    const { web } = await passwordStep(d, user);
    const right = totpCode(secret, 1);
    const wrong = right === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) expect((await codeStep(web, wrong)).status).toBe(401);
    const locked = await codeStep(web, right);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(locked.text).toContain('Too many failed attempts');
  });

  it('never shows or logs the key, a code or a recovery code', async () => {
    const user = await addUser(d);
    // Set up as enrolTotp does, keeping every code typed: a wrong one first, then the one that turns it on.
    const web = await loggedIn(d, user);
    await web.get('/settings/security');
    await web.post('/settings/security/totp/start', { _csrf: web.csrf });
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await web.get('/settings/security')).text)![1]!;
    const valid = (s: string) => [-1, 0, 1, 2].some((step) => totpCode(secret, step) === s);
    // Wrong codes of no pattern a log would hold anyway, and never one the server would take.
    const wrongCodes = ['402917', '583164', '736021'].filter((c) => !valid(c)).slice(0, 2);
    expect(wrongCodes).toHaveLength(2);
    const wrongEnrol = await web.submit('/settings/security/totp', { _csrf: web.csrf, code: wrongCodes[0]! });
    expect(wrongEnrol.status).toBe(401);
    const enrolCode = totpCode(secret);
    const on = await web.submit('/settings/security/totp', { _csrf: web.csrf, code: enrolCode });
    expect(on.redirectedFrom?.status).toBe(303);
    const recoveryCodes = [...on.text.matchAll(/<li><code>([0-9a-z-]{19})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(recoveryCodes).toHaveLength(10);

    // A sign-in with a wrong code, then the next code; another with a recovery code.
    const first = await passwordStep(d, user);
    const wrongSignIn = await codeStep(first.web, wrongCodes[1]!);
    expect(wrongSignIn.status).toBe(401);
    const signInCode = totpCode(secret, 1);
    expect((await codeStep(first.web, signInCode)).status).toBe(303);
    const second = await passwordStep(d, user);
    const last = await codeStep(second.web, recoveryCodes[0]!);
    expect(last.status).toBe(303);
    // Six digits as a code would be shown or logged (`value="123456"`, `"code":"123456"`, `code=123456`), not inside a
    // token, a longer number or the fraction of a duration (`12.402917`), which a page or a line may hold by chance.
    const shown = (code: string) => new RegExp(`(?<![0-9A-Za-z.])${code}(?![0-9A-Za-z])`);
    // The pages that answered a code do not echo it back.
    for (const [page, code] of [[wrongEnrol.text, wrongCodes[0]!], [on.text, enrolCode], [wrongSignIn.text, wrongCodes[1]!]] as const) expect(page).not.toMatch(shown(code));

    // That last request's access-log line closes what this test logged (lines come in order, through a pipe).
    await d.logLine(`"req_id":"${last.headers.get('x-request-id')}"`);
    const logs = d.stdout() + d.stderr();
    for (const value of [secret, recoveryCodes[0]!, recoveryCodes[1]!]) expect(logs).not.toContain(value);
    // Every one-time code typed, right or wrong.
    const codes = { enrolCode, signInCode, wrongEnrol: wrongCodes[0]!, wrongSignIn: wrongCodes[1]! };
    for (const [what, code] of Object.entries(codes)) expect(logs, `${what} ${code} in the log`).not.toMatch(shown(code));
    expect(logs).toContain('"event":"audit.totp.enabled"');
  });

  it('turns off only with the current password', async () => {
    const user = await addUser(d);
    const web = await loggedIn(d, user);
    await enrolTotp(web);
    expect((await web.submit('/settings/security/totp/disable', { _csrf: web.csrf, password: 'not it at all' })).status).toBe(401);
    expect((await web.submit('/settings/security/totp/disable', { _csrf: web.csrf, password: user.password })).text).toContain('Authenticator app off.');
    const { res } = await passwordStep(d, user);
    expect(res.status).toBe(302);
  });

  it('is reset by the operator: the password alone signs in again and the sessions end', async () => {
    const user = await addUser(d);
    const web = await loggedIn(d, user);
    await enrolTotp(web);
    const reset = await runCli(['users', 'reset-2fa', user.email, '--yes', '--data-dir', d.dataDir], { env: d.env });
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain(`reset ${user.email}: removed authenticator app, 10 recovery codes; signed out 1 web session`);
    expect((await web.get('/settings/keys')).location).toMatch(/^\/login/);
    expect((await passwordStep(d, user)).res.status).toBe(302);
    const events = await api(d, `/api/v1/audit-events?type=two_factor.reset&target=${(await api(d, '/api/v1/me', { token: user.apiKey })).body.id}`, { token: admin.apiKey });
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0]).toMatchObject({ via: 'operator', actor: null, details: { totp: true, recoveryCodes: 10, passkeys: 0 } });
    expect(events.body.events[0].user_agent).toMatch(/^docsearch users reset-2fa \(/);
    const none = await runCli(['users', 'reset-2fa', user.email, '--data-dir', d.dataDir], { env: d.env });
    expect(none.stderr).toContain('has no second factor: nothing to reset');
  });
});

describe('Settings → Security: sessions', () => {
  let d: Daemon;
  daemonForSuite(
    async (started) => {
      d = started;
    },
    { args: ['--trust-proxy'] },
  );
  beforeEach(newAddress);

  it('lists where the account is signed in (device, address, last seen) and ends one, or every other', async () => {
    const user = await addUser(d);
    const laptop = await loggedIn(d, user);
    newAddress();
    const phone = browser(d);
    phone.headers['user-agent'] = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
    expect((await phone.login(user.email, user.password)).status).toBe(302);
    newAddress();
    const third = await loggedIn(d, user);
    const page = await laptop.get('/settings/security');
    const table = /<table class="rows" id="sessions">([\s\S]*?)<\/table>/.exec(page.text)![1]!;
    const rows = [...table.matchAll(/<tr( class="current")?>([\s\S]*?)<\/tr>/g)].slice(1).map((m) => ({
      current: !!m[1],
      device: /<td>([^<]*)/.exec(m[2]!)![1]!.trim(),
      address: /data-label="Address">([^<]*)</.exec(m[2]!)![1],
      handle: /sessions\/([0-9a-f]{16})\/end/.exec(m[2]!)?.[1],
    }));
    expect(rows).toHaveLength(3);
    expect(rows.find((r) => r.current)).toMatchObject({ address: `198.51.100.${addresses - 2}`, handle: undefined });
    const phoneRow = rows.find((r) => r.device.startsWith('Safari'))!;
    expect(phoneRow).toMatchObject({ device: 'Safari 17 on iOS 17.4', address: `198.51.100.${addresses - 1}` });
    expect(page.text).toContain('with password');
    // End the phone's: it is signed out at its next page, the others are not.
    expect((await laptop.submit(`/settings/security/sessions/${phoneRow.handle}/end`, { _csrf: laptop.csrf })).text).toContain('Ended that session.');
    expect((await phone.get('/settings/keys')).location).toMatch(/^\/login/);
    expect((await third.get('/settings/keys')).status).toBe(200);
    const thirdRow = rows.find((r) => !r.current && r !== phoneRow)!;
    // Another account's session cannot be ended by its handle.
    const other = await loggedIn(d, await addUser(d));
    await other.get('/settings/security');
    const ended = await other.submit(`/settings/security/sessions/${thirdRow.handle}/end`, { _csrf: other.csrf });
    expect(ended.text).toContain('That session had ended already.');
    expect((await third.get('/settings/keys')).status).toBe(200);
    const all = await laptop.submit('/settings/security/sessions/end-others', { _csrf: laptop.csrf });
    expect(all.text).toContain('Signed out 1 other session.');
    expect((await third.get('/settings/keys')).location).toMatch(/^\/login/);
    expect((await laptop.get('/settings/keys')).status).toBe(200);
  });
});

describe('--require-2fa all', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
    },
    { args: ['--require-2fa', 'all', '--trust-proxy'] },
  );
  beforeEach(newAddress);

  it('sends an account without a second factor to set one up before anything else, and mints no key or grant for it', async () => {
    const web = await loggedIn(d, user);
    // The CLI's browser login, as `docsearch login` opens it.
    const cliLogin = authorizePath({ client_id: 'docsearch-cli', redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', scope: 'read:documents', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    for (const page of ['/', '/documents', '/settings/keys', cliLogin]) {
      const res = await web.get(page);
      expect(res.status, page).toBe(302);
      expect(res.location, page).toBe(`/settings/security?return_to=${encodeURIComponent(page)}`);
    }
    const security = await web.get('/settings/security?return_to=%2Fdocuments');
    expect(security.status).toBe(200);
    expect(security.text).toContain('This server requires a second factor for your account');
    expect((await web.post('/settings/keys', { _csrf: web.csrf, name: 'sneaky', scopes: ['read:documents'] })).location).toMatch(/^\/settings\/security/);
    expect((await web.post('/oauth/consent', { _csrf: web.csrf, client_id: 'docsearch-cli', decision: 'approve' })).status).toBe(403);
    const viaKey = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'from an older key' } });
    expect(viaKey.status).toBe(403);
    expect(viaKey.body.error.message).toContain('requires a second factor');

    const { secret } = await enrolTotp(web);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect((await web.get('/documents')).status).toBe(200);
    expect((await web.get(cliLogin)).text).toContain('name="decision"');
    expect((await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'now it may' } })).status).toBe(201);
    // The last factor stays while the policy asks for one.
    const off = await web.submit('/settings/security/totp/disable', { _csrf: web.csrf, password: user.password });
    expect(off.status).toBe(400);
    expect(off.text).toContain('set up another one before removing this one');
  });
});

describe('the secrets key', () => {
  it('seals authenticator secrets outside the database: another key is refused while they exist, the same one opens them', async () => {
    const d = await startDaemon();
    try {
      const user = await addUser(d);
      const { secret } = await enrolTotp(await loggedIn(d, user));
      expect(statSync(join(d.dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
      expect(await d.stop()).toBe(0);
      const other = randomBytes(32).toString('hex');
      const refused = await startDaemon({ dataDir: d.dataDir, databaseUrl: d.databaseUrl, args: ['--secrets-key', other] }).then(
        (started) => started.stop().then(() => 'started'),
        (err: Error) => err.message,
      );
      expect(refused).toContain("this library seals authenticator-app secrets, sources' credentials and unsent mail with another secrets key");
      expect(refused).not.toContain(other);
      const again = await startDaemon({ dataDir: d.dataDir, databaseUrl: d.databaseUrl });
      try {
        const web = browser(again);
        await web.login(user.email, user.password);
        await web.get('/login/verify');
        expect((await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: '' })).status).toBe(303);
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  });
  it('refuses another key while only unsent mail is sealed under the first (no authenticator app, no source)', async () => {
    // Mail waits sealed while the SMTP server does not answer; a new key would leave it unreadable, to be given up.
    const port = await freePort();
    const smtp = ['--smtp-url', `smtp://127.0.0.1:${port}`];
    const d = await startDaemon({ args: smtp });
    try {
      const admin = await addUser(d); // the first account is the admin
      const queued = await api(d, '/api/v1/admin/mail/test', { token: admin.apiKey, body: {} });
      expect(queued.status).toBe(202);
      expect(await d.stop()).toBe(0);
      const other = randomBytes(32).toString('hex');
      const refused = await startDaemon({ dataDir: d.dataDir, databaseUrl: d.databaseUrl, args: [...smtp, '--secrets-key', other] }).then(
        (started) => started.stop().then(() => 'started'),
        (err: Error) => err.message,
      );
      expect(refused).toContain("this library seals authenticator-app secrets, sources' credentials and unsent mail with another secrets key");
      // With its own key the mail is still there to send, not given up as sealed under another.
      const again = await startDaemon({ dataDir: d.dataDir, databaseUrl: d.databaseUrl, args: smtp });
      try {
        const mail = (await api(again, '/api/v1/admin/mail', { token: admin.apiKey })).body.mail as { id: string; status: string; last_error: string | null }[];
        const kept = mail.find((m) => m.id === queued.body.id);
        expect(kept?.status).toBe('queued');
        expect(kept?.last_error ?? '').not.toMatch(/another secrets key/);
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  });
});
