import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { SigningPasskey } from '../helpers/soft-passkey.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { openTransaction, sealTransaction } from '../../src/auth/sso/transaction.js';
import { httpClient } from '../mcp/mcp-client.js';
import { loggedIn, newKeyOnPage, WebClient } from '../server/web-client.js';
import { enrolTotp, totpCode } from './two-factor/totp.js';

/**
 * Credential rules a mutation audit of src/auth found no test holding: each case breaks when its check
 * is taken out of the product, through the built daemon over real HTTP, the MCP SDK's client and the OAuth flow.
 */
const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Waits out the last second of a 30 s TOTP step, so the server reads the same step as the code just made. */
async function awayFromStepEdge(): Promise<void> {
  const intoStep = Date.now() % 30_000;
  if (intoStep > 28_500) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 200));
}

describe('credential rules no other test held', () => {
  let d: Daemon;
  daemonForSuite(async (started) => {
    d = started;
    await addUser(d); // the first account is the admin, which cannot be disabled
  });

  /** POST /mcp initialize with a bearer credential: the HTTP status the MCP endpoint answers. */
  const mcpStatus = async (token: string) => {
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mutants', version: '1' } } }),
    });
    await res.body?.cancel();
    return res.status;
  };

  it("refuses a disabled account's API key on the REST API and on MCP, also one whose row the revocation missed", async () => {
    // Disabling revokes the account's keys; a key made at that moment on another replica commits after the
    // revocation, unrevoked. Made here by clearing the revocation: the account's state alone must refuse it.
    const bob: TestUser = await addUser(d);
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status).toBe(200);
    await (await httpClient(d, bob.apiKey)).close();
    const disabled = await runCli(['users', 'disable', bob.email, '--yes', '--data-dir', d.dataDir], { env: d.env });
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(withLibraryDb(d.dataDir, (db) => db.prepare('update api_keys set revoked_at = null where key_hash = ?').run(hashOf(bob.apiKey)).changes)).toBe(1);
    const rest = await api(d, '/api/v1/projects', { token: bob.apiKey });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await mcpStatus(bob.apiKey)).toBe(401);
    await expect(httpClient(d, bob.apiKey)).rejects.toThrow();
  });

  it("signs a disabled account's web session out, also one the disable did not end", async () => {
    // Disabling ends the account's sessions; one a sign-in on another replica commits just after is left. Made here
    // by marking the account disabled underneath its session: the account's state alone must end it.
    const carol = await addUser(d);
    const web = await loggedIn(d, carol);
    expect((await web.get('/settings/keys')).status).toBe(200);
    expect(withLibraryDb(d.dataDir, (db) => db.prepare('update users set disabled_at = ? where email = ?').run(Date.now(), carol.email).changes)).toBe(1);
    const after = await web.get('/settings/keys');
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login/);
  });

  it('ends the session a sign-in started from: its cookie and form token are worth nothing after (docs/security.md)', async () => {
    const user = await addUser(d);
    const web = new WebClient(d);
    await web.get('/login');
    const [before, csrf] = [web.sessionCookie!, web.csrf];
    expect((await web.post('/login', { _csrf: csrf, email: user.email, password: user.password, return_to: '' })).status).toBe(302);
    expect(web.sessionCookie).not.toBe(before);
    expect(withLibraryDb(d.dataDir, (db) => db.prepare('select count(*) as n from sessions where id_hash = ?').get(hashOf(before)) as { n: number }).n).toBe(0);
    // The old cookie with its own token: a form it could post before is refused now.
    const old = new WebClient(d);
    old.cookies.set('ds_session', before);
    const replay = await old.post('/login', { _csrf: csrf, email: user.email, password: user.password, return_to: '' });
    expect(replay.status).toBe(403);
  });

  it('lets a sensitive change through for 15 minutes after the last proof, then asks to confirm access', async () => {
    const user = await addUser(d);
    const web = await loggedIn(d, user);
    const idHash = hashOf(web.sessionCookie!);
    const provedAgo = (ms: number) => withLibraryDb(d.dataDir, (db) => db.prepare('update sessions set confirmed_at = ? where id_hash = ?').run(Date.now() - ms, idHash));
    const newKey = async () => {
      await web.get('/settings/keys');
      return web.submit('/settings/keys', { _csrf: web.csrf, name: 'sudo', scopes: ['read:documents'] });
    };
    provedAgo(15 * 60_000 - 10_000);
    expect(newKeyOnPage((await newKey()).text)).toMatch(/^dsk_/);
    provedAgo(15 * 60_000 + 10_000);
    const asked = await newKey();
    expect(asked.text).toContain('<h1>Confirm access</h1>');
    expect(newKeyOnPage(asked.text)).toBeNull();
  });

  it("takes an authenticator code one 30 s step either side of the server's clock, not two", async () => {
    const user = await addUser(d);
    const { secret } = await enrolTotp(await loggedIn(d, user));
    const secondStep = async (steps: number) => {
      const web = new WebClient(d);
      await web.get('/login');
      expect((await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: '' })).location).toMatch(/^\/login\/verify/);
      await web.get('/login/verify');
      await awayFromStepEdge();
      return (await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, steps), return_to: '' })).status;
    };
    // Later steps first: a step once accepted refuses every step up to it.
    expect(await secondStep(2)).toBe(401);
    expect(await secondStep(1)).toBe(303);
  });

  it('keeps the second step of a password sign-in 5 minutes (docs/security.md): past them, a right code signs nobody in', async () => {
    const user = await addUser(d);
    const { secret } = await enrolTotp(await loggedIn(d, user));
    const web = new WebClient(d);
    await web.get('/login');
    expect((await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: '' })).location).toMatch(/^\/login\/verify/);
    const idHash = hashOf(web.sessionCookie!);
    const pending = () => withLibraryDb(d.dataDir, (db) => db.prepare('select created_at, pending_until from sessions where id_hash = ?').get(idHash) as { created_at: number; pending_until: number });
    expect(pending().pending_until - pending().created_at).toBe(5 * 60_000);
    await web.get('/login/verify');
    withLibraryDb(d.dataDir, (db) => db.prepare('update sessions set pending_until = ? where id_hash = ?').run(Date.now() - 1000, idHash));
    await awayFromStepEdge();
    const late = await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: '' });
    expect(late.status).toBe(302);
    expect(late.location).toBe('/login');
    expect((await web.get('/settings/keys')).location).toMatch(/^\/login/);
  });

  it('signs nobody in when the account is disabled between the password and the code', async () => {
    const user = await addUser(d);
    const { secret } = await enrolTotp(await loggedIn(d, user));
    const web = new WebClient(d);
    await web.get('/login');
    expect((await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: '' })).location).toMatch(/^\/login\/verify/);
    await web.get('/login/verify');
    withLibraryDb(d.dataDir, (db) => db.prepare('update users set disabled_at = ? where email = ?').run(Date.now(), user.email));
    await awayFromStepEdge();
    const answer = await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: '' });
    expect(answer.status).toBe(302);
    expect(answer.location).toBe('/login');
  });

  it('keeps a web session 7 days from its last use (docs/security.md), and not past its end', async () => {
    const web = await loggedIn(d, await addUser(d));
    const idHash = hashOf(web.sessionCookie!);
    type Row = { expires_at: number; last_seen_at: number };
    const row = () => withLibraryDb(d.dataDir, (db) => db.prepare('select expires_at, last_seen_at from sessions where id_hash = ?').get(idHash) as Row);
    const WEEK = 7 * 24 * 3600_000;
    expect(row().expires_at - row().last_seen_at).toBe(WEEK);
    // Last used two minutes ago: a page renews it, a week from now.
    const before = row();
    withLibraryDb(d.dataDir, (db) => db.prepare('update sessions set expires_at = ?, last_seen_at = ? where id_hash = ?').run(before.expires_at - 120_000, before.last_seen_at - 120_000, idHash));
    const start = Date.now();
    expect((await web.get('/settings/keys')).status).toBe(200);
    const renewed = row();
    expect(renewed.last_seen_at).toBeGreaterThanOrEqual(start);
    expect(renewed.expires_at - renewed.last_seen_at).toBe(WEEK);
    // Past its end, the same cookie signs nobody in.
    withLibraryDb(d.dataDir, (db) => db.prepare('update sessions set expires_at = ? where id_hash = ?').run(Date.now() - 1000, idHash));
    const after = await web.get('/settings/keys');
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login/);
  });
});

describe('an SSO sign-in in flight', () => {
  // The daemon takes no clock from outside: the transaction the browser carries is opened here with a moved one.
  it('is finished within 15 minutes of leaving for the provider, by the session that started it', () => {
    const startedAt = Date.UTC(2030, 0, 1);
    const sealed = sealTransaction('session-a', { state: 's', nonce: 'n', verifier: 'v', startedAt });
    expect(openTransaction('session-a', sealed, () => startedAt + 15 * 60_000)).toMatchObject({ state: 's', nonce: 'n', verifier: 'v' });
    expect(openTransaction('session-a', sealed, () => startedAt + 15 * 60_000 + 1)).toBeNull();
    expect(openTransaction('session-a', sealed, () => startedAt - 1)).toBeNull();
    expect(openTransaction('session-b', sealed, () => startedAt)).toBeNull();
  });
});

describe('a passkey used to sign in', () => {
  // Passkeys need a public URL on localhost (docs/security.md), so this daemon is started with one.
  let d: Daemon;
  beforeAll(async () => {
    const port = await freePort();
    d = await startDaemon({ args: ['--port', String(port), '--public-url', `http://localhost:${port}`] });
    await addUser(d); // the first account, the admin, which cannot be disabled
  }, 120_000);
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  /** A JSON POST as the pages' script sends it, the browser's cookies sent and kept. */
  async function postJson(web: WebClient, path: string, body: unknown): Promise<{ status: number; text: string; body: any }> {
    const res = await fetch(d.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': web.csrf, cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body: JSON.stringify(body),
      redirect: 'manual',
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()];
      if (value === '' || /max-age=0/i.test(line)) web.cookies.delete(name);
      else web.cookies.set(name, value);
    }
    const text = await res.text();
    return { status: res.status, text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  }

  /** A new account with a passkey registered in its Settings, and a sign-in with that passkey alone. */
  async function withPasskey(): Promise<{ user: TestUser; signIn: (userVerified?: boolean) => Promise<{ answer: { status: number; text: string }; signedIn: boolean }> }> {
    const user = await addUser(d);
    const key = new SigningPasskey(d.url.replace('127.0.0.1', 'localhost'));
    const web = await loggedIn(d, user);
    await web.get('/settings/security');
    const options = await postJson(web, '/settings/security/passkeys/options', {});
    expect(options.status, options.text).toBe(200);
    expect((await postJson(web, '/settings/security/passkeys', { response: key.register(options.body), name: 'Key' })).status).toBe(200);
    const signIn = async (userVerified = true) => {
      const browser = new WebClient(d);
      await browser.get('/login');
      const asked = await postJson(browser, '/login/passkey/options', {});
      expect(asked.status, asked.text).toBe(200);
      const answer = await postJson(browser, '/login/passkey', { response: key.assert(asked.body, undefined, userVerified), return_to: '' });
      return { answer, signedIn: (await browser.get('/settings/keys')).status === 200 };
    };
    return { user, signIn };
  }

  it('alone, must verify its user (docs/security.md): a passkey only touched signs nobody in', async () => {
    const { signIn } = await withPasskey();
    const touched = await signIn(false);
    expect(touched.answer.status, touched.answer.text).toBeGreaterThanOrEqual(400);
    expect(touched.signedIn).toBe(false);
    const verified = await signIn(true);
    expect(verified.answer.status, verified.answer.text).toBe(200);
    expect(verified.signedIn).toBe(true);
  });

  it('of a disabled account signs nobody in, and says the account is disabled', async () => {
    const { user, signIn } = await withPasskey();
    const before = await signIn();
    expect(before.answer.status, before.answer.text).toBe(200);
    expect(before.signedIn).toBe(true);
    const disabled = await runCli(['users', 'disable', user.email, '--yes', '--data-dir', d.dataDir], { env: d.env });
    expect(disabled.code, disabled.stderr).toBe(0);
    const after = await signIn();
    expect(after.answer.text).toContain('This account is disabled. Ask an administrator of this docsearch to enable it.');
    expect(after.answer.status).toBe(401);
    expect(after.signedIn).toBe(false);
  });
});

