/**
 * Sources against a hostile or broken counterpart and a hostile user (docs/sources.md): whatever a server sends or a
 * user asks, the daemon lives, the pass ends with a clear error or a clear item error, nothing is fetched from
 * outside the source, and nothing is said of what the asker may not read. One real daemon and one real HTTP server
 * that plays a WebDAV server and a web site gone wrong in many ways, each under its own path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
const MiB = 1024 * 1024;

/** One PROPFIND entry: a folder, or a file that says it has `length` bytes. */
const entry = (href: string, folder: boolean, length = 10) =>
  `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${
    folder ? '<d:resourcetype><d:collection/></d:resourcetype>' : `<d:resourcetype/><d:getcontentlength>${length}</d:getcontentlength><d:getcontenttype>text/plain</d:getcontenttype>`
  }<d:getetag>"e-${href.length}-${length}"</d:getetag><d:getlastmodified>Mon, 01 Dec 2025 10:00:00 GMT</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;
const OPEN = '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">';
const multistatus = (entries: string) => `${OPEN}${entries}</d:multistatus>`;

/** Writes `total` bytes of `chunk`s as fast as the reader takes them; resolves with how many it wrote before the end or the close. */
function pour(res: ServerResponse, total: number, chunk: Buffer | (() => Buffer)): Promise<number> {
  return new Promise((resolve) => {
    let sent = 0;
    res.once('close', () => resolve(sent));
    const pump = () => {
      while (sent < total && !res.destroyed) {
        const part = typeof chunk === 'function' ? chunk() : chunk;
        sent += part.length;
        if (!res.write(part)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
}

describe('sources against a hostile counterpart and a hostile user', () => {
  const tmp = tempDirs('source-probe');
  let server: Server;
  let base: string;
  let d: Daemon;
  let client: SourceClient;
  let key: string;
  let root: string;
  let outside: string;
  /** Every request the server had: method and path as sent. */
  const requests: string[] = [];
  /** Bytes the server managed to write of each poured answer, by path, once its connection ended. */
  const poured = new Map<string, Promise<number>>();
  let deepRequests = 0;
  let twiceGets = 0;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url!, 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    const path = decodeURIComponent(url.pathname);
    const dav = (folder: string) => path.startsWith(`/${folder}/remote.php/dav/files/a/`);
    if (dav('big')) {
      // A file whose listing says 10 bytes and whose answer is 64 MiB.
      if (req.method === 'PROPFIND') return void res.writeHead(207, { 'content-type': 'application/xml' }).end(multistatus(entry('/big/remote.php/dav/files/a/', true) + entry('/big/remote.php/dav/files/a/big.txt', false)));
      res.writeHead(200, { 'content-type': 'text/plain' });
      poured.set('big', pour(res, 64 * MiB, Buffer.alloc(MiB, 0x61)));
      return;
    }
    if (dav('endless')) {
      // A listing far past any folder's (200 MiB, then ended without its closing tag).
      res.writeHead(207, { 'content-type': 'application/xml' });
      res.write(OPEN);
      let i = 0;
      const block = () => Buffer.from(Array.from({ length: 500 }, () => entry(`/endless/remote.php/dav/files/a/f${i++}.txt`, false)).join(''));
      poured.set('endless', pour(res, 200 * MiB, block));
      return;
    }
    if (dav('names')) {
      const top = '/names/remote.php/dav/files/a/';
      if (req.method === 'PROPFIND') {
        if (path !== top) return void res.writeHead(404).end();
        const listing = [entry(top, true), entry(`${top}..%2F..%2Fescape.txt`, false), entry(`${top}..%2F..%2Fup%2F`, true), entry(`${top}__proto__`, false), entry(`${top}constructor`, false), entry(`${top}ok.txt`, false)];
        return void res.writeHead(207, { 'content-type': 'application/xml' }).end(multistatus(listing.join('')));
      }
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`the file ${path.slice(top.length)} holds namesword`);
    }
    if (dav('twice')) {
      // The same file listed twice, as two versions; each GET gives other bytes.
      const top = '/twice/remote.php/dav/files/a/';
      if (req.method === 'PROPFIND') return void res.writeHead(207, { 'content-type': 'application/xml' }).end(multistatus(entry(top, true) + entry(`${top}dup.txt`, false) + entry(`${top}dup.txt`, false, 11)));
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`answer ${++twiceGets} of a file listed twice: twiceword`);
    }
    if (dav('deep')) {
      // Every folder lists a folder in itself: a tree without end.
      if (req.method === 'PROPFIND') {
        deepRequests++;
        const self = path.endsWith('/') ? path : `${path}/`;
        const top = self === '/deep/remote.php/dav/files/a/';
        return void res.writeHead(207, { 'content-type': 'application/xml' }).end(multistatus(entry(self, true) + entry(`${self}sub/`, true) + (top ? entry(`${self}top.txt`, false) : '')));
      }
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('the top of a deep tree: deepword');
    }
    if (path === '/links/') {
      // One page linking to thousands of addresses, none of them a page.
      const links = Array.from({ length: 5000 }, (_, i) => `<a href="/links/gone-${i}.html">${i}</a>`).join('');
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>linksword</p>${links}</body></html>`);
    }
    res.writeHead(404).end();
  }

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    root = tmp.make('root');
    outside = tmp.make('outside');
    mkdirSync(join(outside, 'a-folder'));
    writeFileSync(join(outside, 'a-file.txt'), 'not a folder');
    // The library lies under the source root, as /srv/docsearch does under a root of /srv.
    const library = join(root, 'library');
    mkdirSync(library);
    d = await startDaemon({ dataDir: library, args: ['--sources-allow-private', '--source-timeout', '5', '--max-upload-mb', '1', '--source-roots', root] });
    key = (await addUser(d)).apiKey;
    client = new SourceClient(d, key);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    server?.closeAllConnections();
    server?.close();
    tmp.removeAll();
  });

  /** A source added and its first pass ended. */
  async function firstPass(name: string, body: Record<string, unknown>, timeoutMs?: number) {
    const project = await client.project(name);
    const source = await client.add(project, body);
    return { project, source: await client.passAfter(project, source.id, 0, timeoutMs) };
  }

  it('a WebDAV file larger than its listing said is read only up to --max-upload-mb, not held whole', async () => {
    const { project, source } = await firstPass('big file', { url: `${base}/big/remote.php/dav/files/a/` });
    expect(source.item_errors?.items, JSON.stringify(source)).toEqual([expect.objectContaining({ path: 'big.txt', error: 'larger than 1 MiB (--max-upload-mb)' })]);
    // Read whole, all 64 MiB were taken before they were counted; streamed, the pass lets go soon after the first.
    expect(await poured.get('big')).toBeLessThan(16 * MiB);
    expect(await client.allDocuments(project)).toEqual([]);
  });

  it('a WebDAV listing past 64 MiB fails the pass saying so, without reading the rest', async () => {
    const { project, source } = await firstPass('endless listing', { url: `${base}/endless/remote.php/dav/files/a/` });
    expect(source.status, JSON.stringify(source)).toBe('error');
    expect(source.error).toBe(`the WebDAV server's listing of ${base}/endless/remote.php/dav/files/a/ is larger than 64 MiB: nothing was decided from it`);
    expect(await poured.get('endless')).toBeLessThan(128 * MiB);
    expect(await client.allDocuments(project)).toEqual([]);
  });

  it('a WebDAV entry whose name leads out of the folder (..%2F) is neither fetched nor walked, and is listed with why', async () => {
    const { project, source } = await firstPass('dot dot names', { url: `${base}/names/remote.php/dav/files/a/` });
    // Nothing was asked for outside the source folder.
    expect(requests.filter((r) => r.includes('/names/') && !r.includes('/names/remote.php/dav/files/a/'))).toEqual([]);
    expect(source.item_errors?.items).toEqual([expect.objectContaining({ path: '../../escape.txt', error: 'its path leads out of the source folder (a ".." in the listing): not fetched' })]);
    // Times as every time of the API: RFC 3339.
    expect((source.item_errors?.items[0] as { at?: unknown } | undefined)?.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // Prototype keys are names like any other.
    const docs = await client.settled(project, source.id, 3);
    expect([...docs.keys()].sort()).toEqual(['__proto__', 'constructor', 'ok.txt']);
  });

  it('a path a listing names twice is one item: one document, counted once', async () => {
    const { project, source } = await firstPass('listed twice', { url: `${base}/twice/remote.php/dav/files/a/` });
    expect(source.last_result, JSON.stringify(source)).toMatchObject({ listed: 1, added: 1, failed: 0 });
    expect(twiceGets).toBe(1);
    expect((await client.allDocuments(project)).map((doc) => doc.source_path)).toEqual(['dup.txt']);
  });

  it('a WebDAV folder without end is walked only as deep as a path may be: the pass ends, the folder passed over', async () => {
    const { project, source } = await firstPass('deep tree', { url: `${base}/deep/remote.php/dav/files/a/` });
    expect(source.status, JSON.stringify(source).slice(0, 2000)).toBe('active');
    expect(source.item_errors?.items).toEqual([expect.objectContaining({ error: expect.stringMatching(/^passed over: its path must be at most 2048 bytes/) })]);
    // 2048 bytes of "sub/": some 512 folders asked for, no more.
    expect(deepRequests).toBeLessThan(600);
    const docs = await client.settled(project, source.id, 1);
    expect([...docs.keys()]).toEqual(['top.txt']);
  });

  it('a web crawl asks for at most ten new addresses per page of max_pages, however many a page links to', async () => {
    const before = requests.length;
    const { project, source } = await firstPass('many links', { url: `${base}/links/`, options: { max_pages: 5, delay_ms: 0 } });
    expect(source.status, JSON.stringify(source)).toBe('active');
    const asked = requests.slice(before).filter((r) => r.startsWith('GET /links/'));
    expect(asked.length).toBeLessThanOrEqual(5 * 10);
    expect(asked.length).toBeGreaterThan(10);
    await client.settled(project, source.id, 1);
  });

  it('a folder outside --source-roots is refused alike whether it exists, is a file or is not there', async () => {
    const project = await client.project('outside the roots');
    const answers = [];
    for (const path of [join(outside, 'a-folder'), join(outside, 'a-file.txt'), join(outside, 'nothing-here'), '/root/.ssh']) {
      const res = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body: { url: `file://${path}` } });
      expect(res.status).toBe(400);
      answers.push(res.body.error.message.replace(path, 'PATH'));
    }
    expect(new Set(answers)).toEqual(new Set([`body.url: PATH is not under a folder the server allows sources in (${root})`]));
    // Under a root, what is wrong with it is said.
    const missing = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body: { url: `file://${root}/nothing-here` } });
    expect(missing.body.error.message).toBe(`body.url: ${root}/nothing-here cannot be read (ENOENT)`);
  });

  it("a folder that is, holds or lies in the server's data directory is refused, though under a root", async () => {
    const project = await client.project('the library itself');
    for (const path of [root, d.dataDir, join(d.dataDir, 'files')]) {
      const res = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body: { url: `file://${path}` } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toBe(`body.url: ${path} is, holds or lies in this server's own data: no source may read it`);
    }
    // A folder beside it is the root's.
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'beside.txt'), 'a file beside the library: besideword');
    const { project: beside, source } = await firstPass('beside the library', { url: `file://${join(root, 'docs')}` });
    expect([...(await client.settled(beside, source.id, 1)).keys()]).toEqual(['beside.txt']);
  });

  it('credentials that are no valid percent-encoding are a 400 that does not repeat them; options never carry any', async () => {
    const project = await client.project('bad credentials');
    for (const url of [`${base.replace('//', '//al%E9ce:pa%ZZs1gr3t@')}/remote.php/dav/files/a/`, 'imaps://user:p%E9ss1gr3t@127.0.0.1:1/INBOX']) {
      const res = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body: { url } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details[0].path).toBe('body.url');
      expect(JSON.stringify(res.body)).not.toMatch(/s1gr3t|al%E9ce/);
    }
    for (const [body, path] of [
      [{ url: 's3://probe-bucket/', options: { endpoint: 'http://AKIDPROBE:s1gr3t@127.0.0.1:1' } }, 'body.options.endpoint'],
      [{ url: `${base}/site/`, options: { sitemap: 'http://u:s1gr3t@127.0.0.1:1/sitemap.xml' } }, 'body.options.sitemap'],
    ] as const) {
      const res = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details[0].path).toBe(path);
      expect(JSON.stringify(res.body)).not.toContain('s1gr3t');
    }
    const sources = await api(d, `/api/v1/projects/${project}/sources`, { token: key });
    expect(sources.body.sources).toEqual([]);
    expect(d.stdout()).not.toContain('s1gr3t');
    expect(d.stdout(), 'no request failed with a 500').not.toContain('"status":500');
  });
});
