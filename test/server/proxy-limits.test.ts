/**
 * docs/operations.md#behind-a-reverse-proxy: the proxy configurations the docs give pass what the daemon takes, and
 * what it answers. A web search of the longest query the search box takes, all emoji, has a request line of ~24 KB:
 * HAProxy's default buffer (16 KiB) answered it with its own 400, so docs/scale-out.md's configuration sets a larger
 * one; Apache's default LimitRequestLine (8190) answers it 414, the documented 40960 passes it. Signed out, the same
 * link is sent to the login page and back: that redirect once carried the whole address twice encoded (~40 KB), over
 * the response header buffer of a proxy (Apache's 8 KiB, nginx's 4 KiB), which answered 502.
 */
import { mkdtempSync, chmodSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_CHARS } from '../../src/core/search-limits.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../src/server/http-server.js';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { haproxyMissing, type LoadBalancer, startHaproxy } from '../helpers/haproxy.js';
import { freePort } from '../helpers/ports.js';
import { unmet } from '../helpers/requirement.js';
import { spawnServer } from '../helpers/spawned-server.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from '../web/library-client.js';

const HAPROXY_MISSING = haproxyMissing();
const APACHE = '/usr/sbin/apache2';
const APACHE_MODULES = '/usr/lib/apache2/modules';
const APACHE_MISSING = unmet(existsSync(APACHE) && existsSync(join(APACHE_MODULES, 'mod_proxy_http.so')) ? null : 'Apache with mod_proxy_http is not installed (Debian: apache2)');

const longest = `/search?mode=keyword&q=${encodeURIComponent('🎉'.repeat(MAX_QUERY_CHARS))}`;

/**
 * Apache as a reverse proxy to `backend` on two ports: one with its defaults, one with the LimitRequestLine
 * docs/operations.md gives.
 */
async function startApacheProxy(backend: string): Promise<{ plainUrl: string; documentedUrl: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-apache-proxy-'));
  chmodSync(dir, 0o755);
  const [plain, documented] = [await freePort(), await freePort()];
  const proxy = `  ProxyPreserveHost On\n  ProxyPass / ${backend}/\n  ProxyPassReverse / ${backend}/`;
  writeFileSync(
    join(dir, 'httpd.conf'),
    `ServerRoot ${dir}
ServerName 127.0.0.1
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
${['mpm_event', 'authz_core', 'proxy', 'proxy_http'].map((m) => `LoadModule ${m}_module ${APACHE_MODULES}/mod_${m}.so`).join('\n')}
${process.getuid?.() === 0 ? 'User www-data\nGroup www-data' : ''}
Listen 127.0.0.1:${plain}
Listen 127.0.0.1:${documented}
<VirtualHost 127.0.0.1:${plain}>
${proxy}
</VirtualHost>
<VirtualHost 127.0.0.1:${documented}>
  LimitRequestLine 40960
${proxy}
</VirtualHost>
`,
  );
  const server = await spawnServer('apache2', APACHE, ['-d', dir, '-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { dir, ports: [plain, documented], log: join(dir, 'error.log') });
  return { plainUrl: `http://127.0.0.1:${plain}`, documentedUrl: `http://127.0.0.1:${documented}`, stop: () => server.stop() };
}

describe('a search as long as the daemon takes, through the documented proxy configurations', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  /** The longest search through `url`: signed in, the daemon's page; signed out, its login page (a redirect and back). */
  async function searchThrough(url: string): Promise<void> {
    const web = await loggedIn({ ...d, url }, user);
    expect(longest.length).toBeGreaterThan(16 * 1024);
    expect(longest.length).toBeLessThan(MAX_REQUEST_HEAD_BYTES - 1024);
    const res = await web.get(longest);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.text).toContain('name="q"');
    const signedOut = await fetch(url + longest, { redirect: 'manual' });
    expect(signedOut.status, (await signedOut.text()).slice(0, 300)).toBe(302);
    const to = new URL(signedOut.headers.get('location')!, url);
    // Too long to carry through the sign-in: back to the search page, without the query.
    expect([to.pathname, to.searchParams.get('return_to')]).toEqual(['/login', '/search']);
    const login = await fetch(to, { redirect: 'manual' });
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('name="password"');
  }

  describe.skipIf(HAPROXY_MISSING !== null)(`HAProxy${HAPROXY_MISSING ? ` (skipped: ${HAPROXY_MISSING})` : ''}`, () => {
    let lb: LoadBalancer;
    beforeAll(async () => {
      lb = await startHaproxy([Number(new URL(d.url).port)]);
    });
    afterAll(async () => {
      await lb?.stop();
    });

    it(`answers a search page of ${MAX_QUERY_CHARS} emoji with the daemon's page, not the proxy's error, signed in or out`, async () => {
      await searchThrough(lb.url);
    });
  });

  describe.skipIf(APACHE_MISSING !== null)(`Apache${APACHE_MISSING ? ` (skipped: ${APACHE_MISSING})` : ''}`, () => {
    let apache: Awaited<ReturnType<typeof startApacheProxy>>;
    beforeAll(async () => {
      apache = await startApacheProxy(d.url);
    });
    afterAll(async () => {
      await apache?.stop();
    });

    it(`answers 414 for it with its default LimitRequestLine; with the documented one, the daemon's page, signed in or out`, async () => {
      expect((await fetch(apache.plainUrl + longest, { redirect: 'manual' })).status).toBe(414);
      await searchThrough(apache.documentedUrl);
    });
  });
});
