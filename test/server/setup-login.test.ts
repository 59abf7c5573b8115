import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { WebClient } from './web-client.js';

const PASSWORD = 'first-account-password';
const EMAIL = 'owner@example.com';

describe('first-run setup link, login and logout', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });

  it('prints a one-time setup link on the first start', () => {
    expect(d.setupUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/setup\?token=[A-Za-z0-9_-]{20,}$/);
  });

  it('refuses a wrong setup token', async () => {
    const web = new WebClient(d);
    const res = await web.get('/setup?token=not-the-token');
    expect(res.status).toBe(404);
    expect(res.text).toContain('This setup link has already been used or is not valid');
    expect(res.text).not.toContain('name="password"');
  });

  it('refuses the setup form without a valid CSRF token', async () => {
    const web = new WebClient(d);
    const token = new URL(d.setupUrl!).searchParams.get('token')!;
    await web.get(`/setup?token=${token}`);
    for (const csrf of [undefined, 'forged']) {
      const form: Record<string, string> = { token, email: EMAIL, password: PASSWORD };
      if (csrf) form._csrf = csrf;
      const res = await web.post('/setup', form);
      expect(res.status).toBe(403);
      expect(res.text).toContain('the form expired or did not come from this site');
    }
  });

  it('creates the first account through the link exactly once and logs it in', async () => {
    const web = new WebClient(d);
    const page = await web.get(new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Create the first account');
    expect(page.text).toContain('name="password"');
    const anonymous = web.sessionCookie;
    expect(anonymous).toBeTruthy();

    const token = new URL(d.setupUrl!).searchParams.get('token')!;
    const res = await web.post('/setup', { _csrf: web.csrf, token, email: EMAIL, password: PASSWORD });
    expect(res.status).toBe(302);
    expect(res.location).toBe('/documents'); // the library (it was Settings, #21)
    // Logging in rotates the session id (no fixation).
    expect(web.sessionCookie).toBeTruthy();
    expect(web.sessionCookie).not.toBe(anonymous);
    const settings = await web.get('/settings/keys');
    expect(settings.status).toBe(200);
    expect(settings.text).toContain(EMAIL);

    // Second use: the link page and the form are both refused.
    const again = new WebClient(d);
    const second = await again.get(new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search);
    expect(second.status).toBe(404);
    expect(second.text).toContain('This setup link has already been used or is not valid');
    await again.get('/login');
    const replay = await again.post('/setup', { _csrf: again.csrf, token, email: 'intruder@example.com', password: 'intruder-password' });
    expect(replay.status).toBe(404);
    expect(replay.text).toContain('already been used');
    const intruder = await new WebClient(d).login('intruder@example.com', 'intruder-password');
    expect(intruder.status).toBe(401);
  });

  it('rejects a wrong password with a generic error and no session', async () => {
    const web = new WebClient(d);
    const res = await web.login(EMAIL, 'not-the-password');
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong e-mail or password.');
    expect((await web.get('/settings/keys')).location).toBe('/login?return_to=%2Fsettings%2Fkeys');
    // An unknown email gets the very same answer (no account enumeration).
    const unknown = await new WebClient(d).login('nobody@example.com', 'not-the-password');
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('Wrong e-mail or password.');
  });

  it('logs in, goes back to return_to, and logout ends the session only with the CSRF token', async () => {
    const web = new WebClient(d);
    expect((await web.get('/settings/keys')).location).toBe('/login?return_to=%2Fsettings%2Fkeys');
    await web.get('/login?return_to=%2Fsettings%2Fkeys');
    expect(web.lastPage).toContain('name="return_to" value="/settings/keys"');
    const res = await web.post('/login', { _csrf: web.csrf, email: EMAIL, password: PASSWORD, return_to: '/settings/keys' });
    expect(res.status).toBe(302);
    expect(res.location).toBe('/settings/keys');
    const cookie = web.sessionCookie!;
    const settings = await web.get('/settings/keys');
    expect(settings.status).toBe(200);
    const csrf = web.csrf;

    for (const bad of [{}, { _csrf: 'wrong' }] as Record<string, string>[]) {
      const refused = await web.post('/logout', bad);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('the form expired or did not come from this site');
      expect((await web.get('/settings/keys')).status).toBe(200);
    }

    const out = await web.post('/logout', { _csrf: csrf });
    expect(out.status).toBe(302);
    expect(out.location).toBe('/login');
    expect(web.sessionCookie).toBeUndefined();
    // The old cookie no longer works: the session ended on the server, not only in the browser.
    const replay = new WebClient(d);
    replay.cookies.set('ds_session', cookie);
    const after = await replay.get('/settings/keys');
    expect(after.status).toBe(302);
    expect(after.location).toBe('/login?return_to=%2Fsettings%2Fkeys');
  });

  it('gives the signed-in cookie HttpOnly, SameSite=Lax and 7 days, and sends it again as the session slides', async () => {
    const web = new WebClient(d);
    await web.get('/login');
    const res = await web.post('/login', { _csrf: web.csrf, email: EMAIL, password: PASSWORD, return_to: '' });
    expect(res.status).toBe(302);
    const sessionCookie = (r: { headers: Headers }) => r.headers.getSetCookie().filter((l) => l.startsWith('ds_session='));
    const expiresIn = (line: string) => Date.parse(/;\s*expires=([^;]+)/i.exec(line)?.[1] ?? '') - Date.now();
    const WEEK = 7 * 24 * 3600_000;
    const [set] = sessionCookie(res);
    expect(set).toMatch(/;\s*httponly/i);
    expect(set).toMatch(/;\s*samesite=lax/i);
    expect(set).toMatch(/;\s*path=\//i);
    expect(set).not.toMatch(/;\s*secure/i); // plain http here: a browser would drop a Secure cookie
    expect(Math.abs(expiresIn(set!) - WEEK)).toBeLessThan(60_000);
    const id = web.sessionCookie!;
    // Used again within the minute: nothing moves, no cookie is sent.
    const soon = await web.get('/settings/keys');
    expect(soon.status).toBe(200);
    expect(sessionCookie(soon)).toEqual([]);
    // Used after more than the minute (its last use moved back in the database): the expiry moves on, and the
    // browser is given the same session with the new one — before, it kept the first, and dropped the cookie a week
    // after the sign-in however busy the person was.
    await moveLastSeenBack(d, 2 * 3600_000);
    const later = await web.get('/settings/keys');
    expect(later.status).toBe(200);
    const [again] = sessionCookie(later);
    expect(again).toMatch(new RegExp(`^ds_session=${id};`));
    expect(again).toMatch(/;\s*httponly/i);
    expect(Math.abs(expiresIn(again!) - WEEK)).toBeLessThan(60_000);
  });

  it('does not follow a return_to that leaves the site', async () => {
    const web = new WebClient(d);
    await web.get('/login');
    const res = await web.post('/login', { _csrf: web.csrf, email: EMAIL, password: PASSWORD, return_to: '//evil.example/' });
    expect(res.status).toBe(302);
    expect(res.location).toBe('/');
  });

  it('prints no setup link once an account exists', async () => {
    const second = await startDaemon({ dataDir: copyDataDir(d), databaseUrl: d.databaseUrl });
    try {
      expect(second.setupUrl).toBeNull();
      expect(second.stderr()).not.toContain('/setup?token=');
    } finally {
      expect(await second.stop()).toBe(0);
      removeDir(second.dataDir);
    }
  });
});

/** A second daemon can't share the live data dir, so restart checks use a copy of it (and the same database, if PostgreSQL). */
function copyDataDir(d: Daemon): string {
  const copy = mkdtempSync(join(tmpdir(), 'docsearch-test-copy-'));
  cpSync(d.dataDir, copy, { recursive: true });
  rmSync(join(copy, 'daemon.pid'), { force: true });
  return copy;
}

describe('login throttling', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });

  it('locks the account after 5 failures with 429 and Retry-After, even for the right password', async () => {
    const user = await addUser(d);
    const web = new WebClient(d);
    for (let i = 0; i < 5; i++) {
      const res = await web.login(user.email, `wrong-password-${i}`);
      expect(res.status).toBe(401);
      expect(res.text).toContain('Wrong e-mail or password.');
    }
    const locked = await web.login(user.email, user.password);
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('Too many failed attempts. Try again in 15 minutes.');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect((await web.get('/settings/keys')).status).toBe(302);
  });
});

/** Moves every session's last use back by `ms` in the daemon's database (SQLite or PostgreSQL). */
async function moveLastSeenBack(d: Daemon, ms: number): Promise<void> {
  const statement = `update sessions set last_seen_at = last_seen_at - ${Math.round(ms)}`;
  if (d.databaseUrl) {
    const client = new pg.Client({ connectionString: d.databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(join(d.dataDir, 'docsearch.db'));
  try {
    db.prepare(statement).run();
  } finally {
    db.close();
  }
}
