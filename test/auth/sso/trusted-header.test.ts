/**
 * Trusted-header sign-in (docs/sso.md), as a forward-auth proxy gives it: the headers are believed from the
 * --trust-proxy address alone (here 127.0.0.2, a loopback address of its own), for web pages only. The same headers
 * from any other address are ignored, as are its X-Forwarded-* headers.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, removeDir, runCli, startDaemon } from '../../helpers/daemon.js';

const PROXY = '127.0.0.2';
const ELSEWHERE = '127.0.0.1';

interface Answer {
  status: number;
  location: string | undefined;
  setCookies: string[];
  body: string;
}

/** A browser behind (or beside) the proxy: its cookies, and requests sent from the address given. */
class Browser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly d: Daemon) {}

  get(path: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send('GET', path, from, headers);
  }

  /** A form sent as a browser sends it (url-encoded). */
  post(path: string, from: string, headers: Record<string, string>, form: Record<string, string>): Promise<Answer> {
    return this.send('POST', path, from, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams(form).toString());
  }

  private send(method: string, path: string, from: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const url = new URL(path, this.d.url);
    return new Promise((resolve, reject) => {
      const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const req = request(url, { method, localAddress: from, headers: { accept: 'text/html', ...(cookie ? { cookie } : {}), ...headers } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          const setCookies = res.headers['set-cookie'] ?? [];
          for (const line of setCookies) {
            const [pair] = line.split(';');
            const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
            if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
            else this.cookies.set(name, value);
          }
          resolve({ status: res.statusCode ?? 0, location: res.headers.location, setCookies, body });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

describe('trusted-header sign-in behind a forward-auth proxy', () => {
  let d: Daemon;
  const ann = { 'Remote-User': 'ann', 'Remote-Email': 'ann@example.org', 'Remote-Groups': 'writers,admins' };

  beforeAll(async () => {
    d = await startDaemon({ args: ['--trusted-header-login', '--trust-proxy', PROXY, '--sso-name', 'Authelia', '--sso-admin-group', 'admins'] });
  });
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const groupsOf = async (email: string) => {
    const all = JSON.parse((await op('groups', 'list', '--json')).stdout).groups as { name: string; source: string }[];
    const mine: string[] = [];
    for (const g of all) {
      const members = JSON.parse((await op('groups', 'members', g.name, '--json')).stdout).members as { email: string }[];
      if (members.some((m) => m.email === email)) mine.push(`${g.name} (${g.source})`);
    }
    return mine;
  };

  it('ignores the headers from an address outside --trust-proxy', async () => {
    const browser = new Browser(d);
    const res = await browser.get('/projects', ELSEWHERE, { 'Remote-User': 'mallory', 'Remote-Email': 'mallory@example.org', 'Remote-Groups': 'admins' });
    expect(res.status).toBe(302);
    expect(res.location).toBe('/login?return_to=%2Fprojects');
    const users = JSON.parse((await op('users', 'list', '--json')).stdout).users as { email: string }[];
    expect(users.map((u) => u.email)).not.toContain('mallory@example.org');
  });

  it('signs in from the proxy: the account, its groups (the proxy\'s, read-only) and the admin group', async () => {
    const browser = new Browser(d);
    const res = await browser.get('/projects', PROXY, ann);
    expect(res.status).toBe(200);
    expect(res.body).toContain('ann@example.org');
    expect(await groupsOf('ann@example.org')).toEqual(['admins (Authelia)', 'writers (Authelia)']);
    expect((await browser.get('/admin/users', PROXY, ann)).status).toBe(200);
    // Once signed in, the same headers from elsewhere change nothing: the session is what counts there.
    expect((await browser.get('/projects', ELSEWHERE, { ...ann, 'Remote-User': 'mallory' })).status).toBe(200);
  });

  it("signs in a person whose address the proxy vouches for at an intranet's single-label domain (typed, such an address is refused as a slip)", async () => {
    const res = await new Browser(d).get('/projects', PROXY, { 'Remote-User': 'dana', 'Remote-Email': 'dana@corp', 'Remote-Groups': 'writers' });
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    expect(res.body).toContain('dana@corp');
  });

  it("reads the proxy's e-mail and groups as UTF-8, a group in either Unicode spelling one group", async () => {
    // Node hands header bytes over as Latin-1: a proxy's UTF-8 "Zoë" arrives as "ZoÃ«" unless read as UTF-8.
    const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
    const zoe = { 'Remote-User': 'zoe', 'Remote-Email': utf8('zoë@example.org'), 'Remote-Groups': utf8(`Rédaction,${'Équipe'.normalize('NFD')}`) };
    const res = await new Browser(d).get('/projects', PROXY, zoe);
    expect(res.status).toBe(200);
    expect(await groupsOf('zoë@example.org')).toEqual(['Rédaction (Authelia)', 'Équipe (Authelia)']);
    const yan = { 'Remote-User': 'yan', 'Remote-Email': 'yan@example.org', 'Remote-Groups': utf8('Équipe'.normalize('NFC')) };
    expect((await new Browser(d).get('/projects', PROXY, yan)).status).toBe(200);
    expect(await groupsOf('yan@example.org')).toEqual(['Équipe (Authelia)']);
    // A proxy that sends Latin-1 (a lone byte 0xE9 is no UTF-8) is read as it was before.
    const xia = { 'Remote-User': 'xia', 'Remote-Email': 'xia@example.org', 'Remote-Groups': 'Caf\u00e9' };
    expect((await new Browser(d).get('/projects', PROXY, xia)).status).toBe(200);
    expect(await groupsOf('xia@example.org')).toEqual(['Café (Authelia)']);
  });

  it('follows the proxy: new groups at the next page, another person a new session', async () => {
    const browser = new Browser(d);
    await browser.get('/projects', PROXY, ann);
    const first = browser.cookies.get('ds_session');
    const readers = { ...ann, 'Remote-Groups': 'readers' };
    expect((await browser.get('/projects', PROXY, readers)).status).toBe(200);
    expect(await groupsOf('ann@example.org')).toEqual(['readers (Authelia)']);
    expect((await browser.get('/admin/users', PROXY, readers)).status).toBe(403);
    expect(browser.cookies.get('ds_session')).toBe(first);
    const ben = await browser.get('/projects', PROXY, { 'Remote-User': 'ben@example.org' });
    expect(ben.status).toBe(200);
    expect(ben.body).toContain('ben@example.org');
    expect(browser.cookies.get('ds_session')).not.toBe(first);
  });

  it('a form sent under a session the proxy no longer vouches for is not acted on; a person it names but docsearch refuses ends the session', async () => {
    const browser = new Browser(d);
    const page = await browser.get('/settings/keys', PROXY, ann);
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    // Another person at the proxy, the browser still holding ann's session and her form: no key is made for ann.
    const sent = await browser.post('/settings/keys', PROXY, { 'Remote-User': 'ben@example.org' }, { _csrf: csrf, name: 'made-under-ben', scopes: 'read:documents' });
    expect(sent.status).toBe(403);
    expect((await new Browser(d).get('/settings/keys', PROXY, ann)).body).not.toContain('made-under-ben');

    await browser.get('/projects', PROXY, ann);
    const annSession = browser.cookies.get('ds_session')!;
    // The proxy names someone docsearch refuses (no e-mail): the page is refused, and ann's session in this browser ends.
    const refused = await browser.get('/projects', PROXY, { 'Remote-User': 'zed' });
    expect(refused.status).toBe(403);
    expect(browser.cookies.has('ds_session')).toBe(false);
    const replayed = new Browser(d);
    replayed.cookies.set('ds_session', annSession);
    expect((await replayed.get('/projects', ELSEWHERE)).status).toBe(302);
  });

  it('the API keeps its bearer credentials: the headers sign nobody in there', async () => {
    const res = await new Browser(d).get('/api/v1/projects', PROXY, { ...ann, accept: 'application/json' });
    expect(res.status).toBe(401);
  });

  it('trusts X-Forwarded-Proto from the proxy alone', async () => {
    const secure = (res: Answer) => res.setCookies.find((c) => c.startsWith('ds_session='))?.includes('; secure');
    expect(secure(await new Browser(d).get('/login', PROXY, { 'X-Forwarded-Proto': 'https' }))).toBe(true);
    expect(secure(await new Browser(d).get('/login', ELSEWHERE, { 'X-Forwarded-Proto': 'https' }))).toBe(false);
  });
});

describe('trusted-header sign-in needs the proxy named', () => {
  it('refuses to start with --trust-proxy true (any address could send the headers)', async () => {
    const res = await runCli(['serve', '--port', '0', '--trusted-header-login', '--trust-proxy'], { timeoutMs: 30_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--trusted-header-login needs --trust-proxy to list the proxy\'s addresses');
  });
});
