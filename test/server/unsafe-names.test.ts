import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { WebClient } from './web-client.js';

/**
 * Issue #44 item 14: names that display as other names (C0/C1 controls, bidi marks, overrides and isolates, lone
 * surrogates) are refused with a 400 naming the field and the character, on every way a name comes in: upload
 * (filename and paths), rename, project names, through the API and the web forms. And web forms refuse posts
 * another site's page made the browser send (Origin, Sec-Fetch-Site), beside the CSRF token.
 */

async function upload(d: Daemon, user: TestUser, filename: string, paths?: string[]) {
  const form = new FormData();
  form.append('file', new Blob(['some text\n'], { type: 'text/plain' }), filename);
  if (paths) form.append('paths', JSON.stringify(paths));
  const res = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

describe('names that display as others', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it('refuses them on upload: the filename and the paths', async () => {
    const bidi = await upload(d, user, 'report\u202etxt.exe');
    expect(bidi.status).toBe(400);
    expect(bidi.body.error.message).toMatch(/filename must not contain U\+202E \(a bidirectional formatting character\)/);
    const c1 = await upload(d, user, 'a\u009bb.txt');
    expect(c1.status).toBe(400);
    expect(c1.body.error.message).toContain('U+009B');
    const path = await upload(d, user, 'report.txt', ['invoices/report\u0085.txt']);
    expect(path.status).toBe(400);
    expect(path.body.error.message).toBe('paths[0]: must not contain U+0085 (a control character)');
    const isolate = await upload(d, user, 'report.txt', ['invoices\u2066/report.txt']);
    expect(isolate.status).toBe(400);
    expect(isolate.body.error.message).toContain('U+2066');
    const lone = await upload(d, user, 'report.txt', ['invoices/re\ud800port.txt']);
    expect(lone.status).toBe(400);
    expect(lone.body.error.message).toContain('U+D800 (a lone surrogate)');
    // Ordinary non-ASCII names, pairs of surrogates included, still pass.
    const fine = await upload(d, user, 'Zürich 日本 😀.txt', ['Reports/Zürich 日本 😀.txt']);
    expect(fine.status).toBe(202);
  });

  it('refuses them on rename and on project names (API)', async () => {
    const up = await upload(d, user, 'plain.txt');
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    for (const [name, code] of [
      ['report\u202etxt.exe', 'U+202E'],
      ['x\u200fy.txt', 'U+200F'],
      ['x\u061cy.txt', 'U+061C'],
      ['lone\udc00.txt', 'U+DC00'],
      ['nel\u0085.txt', 'U+0085'],
    ] as const) {
      const res = await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: user.apiKey, body: { filename: name } });
      expect(res.status, name).toBe(400);
      expect(res.body.error.message).toContain('filename');
      expect(res.body.error.message).toContain(code);
    }
    const created = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Invoices\u202e' } });
    expect(created.status).toBe(400);
    expect(created.body.error.message).toMatch(/name.*U\+202E/);
    const ok = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Invoices' } });
    expect(ok.status).toBe(201);
    const renamed = await api(d, `/api/v1/projects/${ok.body.id}`, { method: 'PATCH', token: user.apiKey, body: { name: 'In\u2067voices' } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error.message).toMatch(/name.*U\+2067/);
    const key = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'laptop\u202e' } });
    expect(key.status).toBe(400);
    expect(key.body.error.message).toContain('U+202E');
  });

  it('refuses them in the web forms (project names, rename)', async () => {
    const web = new WebClient(d);
    expect((await web.login(user.email, user.password)).status).toBe(302);
    await web.get('/projects');
    const project = await web.submit('/projects', { _csrf: web.csrf, name: 'Bills\u202e', description: '' });
    expect(project.status).toBe(400);
    expect(project.text).toContain('U+202E');
    const up = await upload(d, user, 'web-rename.txt');
    const id = up.body.documents[0].id as string;
    await web.get(`/documents/${id}`);
    const rename = await web.submit(`/documents/${id}/rename`, { _csrf: web.csrf, filename: 'a\u0085b.txt' });
    expect(rename.status).toBe(400);
    expect(rename.text).toContain('U+0085');
    // Settings: an API key's and an application's name.
    await web.get('/settings/keys');
    const key = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'laptop\u202e', scopes: ['read:documents'] });
    expect(key.text).toContain('U+202E');
    expect((await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys.map((k: { name: string | null }) => k.name)).not.toContain('laptop\u202e');
    await web.get('/settings/applications');
    const app = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Mail\u202eapp', redirect_uris: 'https://app.example.org/cb' });
    expect(app.text).toContain('U+202E');
  });

  it('refuses a web form posted from another site (Origin, Sec-Fetch-Site) beside the CSRF token', async () => {
    const web = new WebClient(d);
    expect((await web.login(user.email, user.password)).status).toBe(302);
    await web.get('/projects');
    const csrf = web.csrf;
    // node:http, not fetch: fetch sets Origin and Sec-Fetch-* itself.
    const post = (name: string, headers: Record<string, string>) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const body = new URLSearchParams({ _csrf: csrf, name, description: '' }).toString();
        const req = httpRequest(`${d.url}/projects`, {
          method: 'POST',
          headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), cookie: `ds_session=${web.sessionCookie}`, ...headers },
        }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode!, text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const foreign = await post('From elsewhere', { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('sent from another site');
    expect((await post('Cross site', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post('Null origin', { origin: 'null' })).status).toBe(403);
    // What Chromium sends from our own pages (they are served with Referrer-Policy: no-referrer).
    expect((await post('Own page, no referrer', { origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(303);
    // This site's own pages, and clients that send neither header, still work.
    expect((await post('Same origin', { origin: new URL(d.url).origin, 'sec-fetch-site': 'same-origin' })).status).toBe(303);
    expect((await post('No headers', {})).status).toBe(303);
  });
});
