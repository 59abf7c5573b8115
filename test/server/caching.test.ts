import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { nodeRequest } from '../helpers/node-request.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, type WebClient } from './web-client.js';

const send = nodeRequest;

/**
 * What a browser two people share, or a caching proxy in front of docsearch (docs/operations.md), may keep of each
 * kind of answer, and how it revalidates what it kept (docs/api.md, Conventions; docs/security.md, Headers).
 */
describe('caching: private answers keyed by their credential, files revalidated, assets without cookies', () => {
  let d: Daemon;
  let user: TestUser;
  let web: WebClient;
  let png: Buffer;
  let pngId: string;
  let htmlId: string;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 80, b: 40 } } }).png().toBuffer();
    const html = Buffer.from('<!doctype html><title>t</title><script>alert(document.cookie)</script><p>a page of words</p>');
    const up = await uploadFiles(d, user.apiKey, [
      { name: 'swatch.png', bytes: png },
      { name: 'page.html', bytes: html },
    ]);
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    [pngId, htmlId] = up.body.documents.map((doc: { id: string }) => doc.id);
    web = await loggedIn(d, user);
  });

  const cookie = () => ({ cookie: `ds_session=${web.sessionCookie}` });
  const bearer = () => ({ authorization: `Bearer ${user.apiKey}` });

  it('a thumbnail on the pages varies on the session cookie and answers If-None-Match with a 304, as the API does', async () => {
    for (const [path, credential, vary] of [
      [`/documents/${pngId}/thumbnail.webp`, cookie(), 'Cookie'],
      [`/api/v1/documents/${pngId}/thumbnail`, bearer(), 'Authorization'],
    ] as const) {
      const first = await send(d.url + path, credential);
      expect(first.status, path).toBe(200);
      expect(first.headers['cache-control'], path).toBe('private, max-age=86400');
      expect(first.headers.vary, path).toBe(vary);
      const etag = first.headers.etag as string;
      for (const method of ['GET', 'HEAD']) {
        const again = await send(d.url + path, { ...credential, 'if-none-match': etag }, method);
        expect([again.status, again.body.length, again.headers.etag, again.headers.vary], `${method} ${path}`).toEqual([304, 0, etag, vary]);
        expect(again.headers['cache-control']).toBe('private, max-age=86400');
      }
      expect((await send(d.url + path, { ...credential, 'if-none-match': '"another"' })).status, path).toBe(200);
    }
  });

  it('an original carries its hash as ETag and a Last-Modified, is revalidated each time (304), and says it takes ranges', async () => {
    const sha = createHash('sha256').update(png).digest('hex');
    for (const [path, credential, vary] of [
      [`/documents/${pngId}/file`, cookie(), 'Cookie'],
      [`/api/v1/documents/${pngId}/file`, bearer(), 'Authorization'],
    ] as const) {
      const first = await send(d.url + path, credential);
      expect(first.status, path).toBe(200);
      expect(first.body.equals(png)).toBe(true);
      expect(first.headers, path).toMatchObject({ 'cache-control': 'private, no-cache', vary, etag: `"${sha}"`, 'accept-ranges': 'bytes', 'x-content-type-options': 'nosniff' });
      const lastModified = first.headers['last-modified'] as string;
      expect(Date.parse(lastModified)).toBeGreaterThan(Date.now() - 600_000);

      const byTag = await send(d.url + path, { ...credential, 'if-none-match': `"${sha}"` });
      expect([byTag.status, byTag.body.length], path).toEqual([304, 0]);
      expect(byTag.headers, path).toMatchObject({ etag: `"${sha}"`, vary, 'cache-control': 'private, no-cache' });
      expect(byTag.headers['content-disposition']).toBe(first.headers['content-disposition']);
      expect((await send(d.url + path, { ...credential, 'if-modified-since': lastModified })).status, path).toBe(304);
      // A different ETag wins over a date that would match (RFC 9110 §13.2.2): the bytes again.
      expect((await send(d.url + path, { ...credential, 'if-none-match': '"stale"', 'if-modified-since': lastModified })).status, path).toBe(200);
      // A part of the same bytes, under the same validators (test/server/original-ranges.test.ts has the rest).
      const ranged = await send(d.url + path, { ...credential, range: 'bytes=0-9' });
      expect([ranged.status, ranged.body.equals(png.subarray(0, 10)), ranged.headers['content-range'], ranged.headers.etag], path).toEqual([206, true, `bytes 0-9/${png.length}`, `"${sha}"`]);
    }
    // Another person's browser, or no session: never the bytes, whatever validator it sends.
    const stranger = await addUser(d);
    const theirs = await send(`${d.url}/api/v1/documents/${pngId}/file`, { authorization: `Bearer ${stranger.apiKey}`, 'if-none-match': `"${sha}"` });
    expect(theirs.status).toBe(404);
    expect(theirs.headers.etag).toBeUndefined();
  });

  it('an uploaded HTML page is a download, never a page on our origin', async () => {
    for (const [path, credential] of [
      [`/documents/${htmlId}/file`, cookie()],
      [`/api/v1/documents/${htmlId}/file`, bearer()],
    ] as const) {
      const res = await send(d.url + path, credential);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-disposition'], path).toMatch(/^attachment; /);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none';/);
    }
  });

  it('a file that fails after its headers were chosen answers an error nobody keeps: no-store, no validators, no file name', async () => {
    const lost = Buffer.from('a text whose stored copy goes missing\n');
    const id = (await uploadFiles(d, user.apiKey, [{ name: 'lost.txt', bytes: lost }])).body.documents[0].id;
    const sha = createHash('sha256').update(lost).digest('hex');
    rmSync(join(d.dataDir, 'files', sha.slice(0, 2), sha));
    for (const [path, credential] of [
      [`/documents/${id}/file`, cookie()],
      [`/api/v1/documents/${id}/file`, bearer()],
    ] as const) {
      const res = await send(d.url + path, credential);
      expect(res.status, path).toBe(404);
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect([res.headers.etag, res.headers['last-modified'], res.headers['content-disposition'], res.headers.vary], path).toEqual([undefined, undefined, undefined, undefined]);
    }
  });

  it('static assets: revalidated by their hash (an upgrade is seen at once), and never carry a session cookie', async () => {
    // The session is due for its sliding renewal: the next request it makes renews its cookie.
    withLibraryDb(d.dataDir, (db) => db.prepare('update sessions set last_seen_at = last_seen_at - 120000').run());
    for (const path of ['/static/app.css', '/static/app.js', '/favicon.ico']) {
      const res = await send(d.url + path, cookie());
      expect(res.status, path).toBe(200);
      expect(res.headers['set-cookie'], `${path}: a public answer with a session cookie would hand it to the next person`).toBeUndefined();
      expect(res.headers['cache-control'], path).toBe('public, no-cache');
      expect(res.headers.vary, path).toBeUndefined();
      const again = await send(d.url + path, { 'if-none-match': res.headers.etag as string });
      expect([again.status, again.body.length], path).toEqual([304, 0]);
    }
    // The session was renewed by its next page instead.
    expect((await send(`${d.url}/settings/keys`, cookie())).headers['set-cookie']?.[0]).toMatch(/^ds_session=/);
  });

  it('static assets: a page links them by their content tag, kept for good; another tag is asked about each time', async () => {
    const page = (await send(`${d.url}/settings/keys`, cookie())).body.toString();
    for (const file of ['app.css', 'app.js']) {
      const linked = new RegExp(`"(/static/${file.replace('.', '\\.')}\\?v=([A-Za-z0-9_-]{22}))"`).exec(page);
      expect(linked, `${file} is linked with its tag`).not.toBeNull();
      const [, path, tag] = linked!;
      const res = await send(d.url + path, {});
      expect([res.status, res.headers['cache-control'], res.headers.etag], path).toEqual([200, 'public, max-age=31536000, immutable', `"${tag}"`]);
      // The tag is the bytes' own: the same as the unversioned address serves.
      expect(res.body.equals((await send(`${d.url}/static/${file}`, {})).body), path).toBe(true);
      // A page kept from another release asks for its tag: these bytes are not those, so they are not kept for good.
      const stale = await send(`${d.url}/static/${file}?v=AAAAAAAAAAAAAAAAAAAAAA`, {});
      expect([stale.status, stale.headers['cache-control']], file).toEqual([200, 'public, no-cache']);
    }
  });

  it('pages and API answers are never kept; signing out clears what the browser kept of this site', async () => {
    for (const [path, credential] of [
      ['/', cookie()],
      [`/documents/${pngId}`, cookie()],
      ['/api/v1/projects', bearer()],
    ] as const) {
      const res = await send(d.url + path, credential);
      expect(res.status, path).toBe(200);
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.headers['content-type'], path).toMatch(/; charset=utf-8$/);
    }
    await web.get('/settings/keys');
    const out = await web.post('/logout', { _csrf: web.csrf });
    expect(out.status).toBe(302);
    expect(out.headers.get('clear-site-data')).toBe('"cache"');
  });

  const token = async (type: string | undefined, body: string) => {
    // Bytes, not a string: fetch would call a string text/plain.
    const res = await fetch(`${d.url}/api/oauth/token`, { method: 'POST', headers: type ? { 'content-type': type } : {}, body: Buffer.from(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { error: string; error_description: string } };
  };

  it('the OAuth token endpoint parses JSON (the spec) and a form (RFC 6749) alike, and refuses anything else as invalid_request, never cached', async () => {
    for (const [type, body] of [
      ['application/json', '{"grant_type":"password"}'],
      ['application/json; charset=utf-8', '{"grant_type":"password"}'],
      ['application/x-www-form-urlencoded', 'grant_type=password'],
      ['application/x-www-form-urlencoded; charset=UTF-8', 'grant_type=password'],
      ['Application/X-WWW-Form-Urlencoded', 'grant_type=password'],
    ] as const) {
      const res = await token(type, body);
      expect([res.status, res.body.error], type).toEqual([400, 'unsupported_grant_type']);
    }
    for (const [type, body] of [
      ['text/plain', 'grant_type=authorization_code'],
      ['multipart/form-data; boundary=x', '--x--'],
      [undefined, 'grant_type=authorization_code'],
      ['application/json', '{"grant_type":'],
      ['application/x-www-form-urlencoded', 'grant_type=authorization_code&grant_type=refresh_token'],
      // A parameter given twice (RFC 6749 §3.2) is refused in JSON as in a form, not read as its last value.
      ['application/json', '{"grant_type":"authorization_code","grant_type":"refresh_token"}'],
    ] as const) {
      const res = await token(type, body);
      expect([res.status, res.body.error], `${type} ${body}`).toEqual([400, 'invalid_request']);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect([res.headers.get('cache-control'), res.headers.get('pragma')]).toEqual(['no-store', 'no-cache']);
    }
  });
});
