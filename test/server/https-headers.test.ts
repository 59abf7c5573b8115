/**
 * Behind a TLS-terminating proxy (docs/security.md: the session cookie is `Secure` behind https, and HSTS is sent
 * when the public URL is https): a daemon with an https `--public-url` and `--trust-proxy`, reached as the proxy
 * reaches it (X-Forwarded-Proto: https), sends Strict-Transport-Security and marks its session cookie Secure; one
 * on plain http sends neither (a browser would drop a Secure cookie there).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { WebClient } from './web-client.js';

const sessionCookie = (headers: Headers) => headers.getSetCookie().find((l) => l.startsWith('ds_session='));

describe('https behind a proxy: HSTS and a Secure session cookie', () => {
  let behind: Daemon;
  let plain: Daemon;
  let user: TestUser;
  let plainUser: TestUser;

  beforeAll(async () => {
    [behind, plain] = await Promise.all([startDaemon({ args: ['--public-url', 'https://docs.example.test', '--trust-proxy'] }), startDaemon()]);
    [user, plainUser] = await Promise.all([addUser(behind), addUser(plain)]);
  }, 120_000);
  afterAll(async () => {
    for (const d of [behind, plain]) {
      await d?.stop();
      if (d) removeDir(d.dataDir);
    }
  });

  it('sends HSTS and a Secure, HttpOnly session cookie to a browser that came over https', async () => {
    const web = new WebClient(behind);
    web.headers['x-forwarded-proto'] = 'https';
    const page = await web.get('/login');
    expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000');
    const res = await web.post('/login', { _csrf: web.csrf, email: user.email, password: user.password, return_to: '' });
    expect(res.status).toBe(302);
    const cookie = sessionCookie(res.headers);
    expect(cookie).toMatch(/;\s*secure/i);
    expect(cookie).toMatch(/;\s*httponly/i);
    expect(cookie).toMatch(/;\s*samesite=lax/i);
    expect((await web.get('/settings/keys')).status).toBe(200);
  });

  it('sends neither on plain http', async () => {
    const web = new WebClient(plain);
    const page = await web.get('/login');
    expect(page.headers.get('strict-transport-security')).toBeNull();
    const res = await web.post('/login', { _csrf: web.csrf, email: plainUser.email, password: plainUser.password, return_to: '' });
    expect(res.status).toBe(302);
    expect(sessionCookie(res.headers)).not.toMatch(/;\s*secure/i);
  });
});
