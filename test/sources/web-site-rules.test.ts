/**
 * What docs/sources.md promises of a `web` source, against small real HTTP sites (one per scenario, so robots.txt
 * and its Crawl-delay belong to one): 1 s between requests by default (`delay_ms`); robots.txt's Crawl-delay followed
 * when it asks for more than `delay_ms`, as user agent "docsearch"; at most `max_pages` pages; the `sitemap` option,
 * and the sitemaps robots.txt names; a page answering 404 or 410 is gone while one that cannot be given for now stays
 * as it was; a page larger than --max-upload-mb is an error on that item.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';

const MINUTE = 60_000;

interface Page {
  status?: number;
  type?: string;
  body: string | Buffer;
}

interface Site {
  url: string;
  pages: Map<string, Page>;
  /** Every request so far: when, what, and as whom. */
  requests: { at: number; path: string; agent: string | undefined }[];
}

const html = (text: string, links: string[] = []) => ({ type: 'text/html', body: `<html><body><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>` });

describe('web sources follow the site', () => {
  const servers: Server[] = [];
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1', '--max-upload-mb', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    for (const s of servers) s.close();
  });

  /** A site answering its pages (anything else: 404), with an ETag per body. */
  async function site(pages: Record<string, Page>): Promise<Site> {
    const s: Site = { url: '', pages: new Map(Object.entries(pages)), requests: [] };
    const server = createServer((req, res) => {
      const path = new URL(req.url!, 'http://x').pathname;
      s.requests.push({ at: Date.now(), path, agent: req.headers['user-agent'] });
      const page = s.pages.get(path);
      if (!page) return void res.writeHead(404).end();
      res.writeHead(page.status ?? 200, { 'content-type': page.type ?? 'text/plain' }).end(page.status && page.status !== 200 ? '' : page.body);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return s;
  }

  /**
   * Each request came at least about a second after the one before. The site sees when each arrives, not when the
   * crawler sent it: on a loaded machine one arrival is late by tens of milliseconds (a gap of 940 ms was seen), while
   * a crawler that did not wait sends the next within a few.
   */
  const expectPaced = (requests: { at: number; path: string }[]) => {
    for (let i = 1; i < requests.length; i++) expect(requests[i]!.at - requests[i - 1]!.at, requests[i]!.path).toBeGreaterThanOrEqual(800);
  };

  it("waits robots.txt's Crawl-delay between requests when it asks for more than delay_ms, as user agent docsearch", async () => {
    const s = await site({
      '/robots.txt': { body: 'User-agent: *\nCrawl-delay: 1\n' },
      '/docs/': html('The start page about curlews.', ['a.html', 'b.html']),
      '/docs/a.html': html('Page a about whimbrels.'),
      '/docs/b.html': html('Page b about godwits.'),
    });
    const project = await client.project('crawl delay');
    const source = await client.add(project, { kind: 'web', url: `${s.url}/docs/`, options: { delay_ms: 0 } });
    await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 3)).keys()].sort()).toEqual(['docs/', 'docs/a.html', 'docs/b.html']);
    const pages = s.requests.filter((r) => r.path.startsWith('/docs/'));
    expect(pages).toHaveLength(3);
    expectPaced(s.requests);
    expect(new Set(s.requests.map((r) => r.agent))).toEqual(new Set(['docsearch']));
  }, 2 * MINUTE);

  it('waits 1 s between requests when delay_ms is not given and robots.txt asks for nothing', async () => {
    const s = await site({
      '/docs/': html('The start page about redshanks.', ['a.html']),
      '/docs/a.html': html('Page a about greenshanks.'),
    });
    const project = await client.project('default delay');
    const source = await client.add(project, { url: `${s.url}/docs/` });
    await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['docs/', 'docs/a.html']);
    expect(s.requests.length).toBeGreaterThanOrEqual(3);
    expectPaced(s.requests);
  }, 2 * MINUTE);

  it('lists at most max_pages pages', async () => {
    const links = ['1.html', '2.html', '3.html', '4.html'];
    const s = await site({
      '/docs/': html('The start page about knots.', links),
      ...Object.fromEntries(links.map((l) => [`/docs/${l}`, html(`Page ${l} about knots.`)])),
    });
    const project = await client.project('max pages');
    const source = await client.add(project, { url: `${s.url}/docs/`, options: { delay_ms: 0, max_pages: 2 } });
    const done = await client.passAfter(project, source.id, 0);
    expect(done.last_result).toMatchObject({ listed: 2 });
    expect((await client.settled(project, source.id, 2)).size).toBe(2);
    expect(s.requests.filter((r) => r.path.startsWith('/docs/'))).toHaveLength(2);
  });

  it('lists the pages of the sitemap the sitemap option names', async () => {
    const s = await site({
      '/maps/pages.xml': { type: 'application/xml', body: '' },
      '/docs/': html('The start page, linking to nothing.'),
      '/docs/hidden.html': html('A page only the sitemap names, about phalaropes.'),
    });
    s.pages.get('/maps/pages.xml')!.body = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${s.url}/docs/hidden.html</loc></url></urlset>`;
    const project = await client.project('sitemap option');
    const source = await client.add(project, { url: `${s.url}/docs/`, options: { delay_ms: 0, sitemap: `${s.url}/maps/pages.xml` } });
    await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['docs/hidden.html']);
  });

  it('lists the pages of the sitemaps robots.txt names (linked from no page, where no sitemap.xml is)', async () => {
    const s = await site({
      '/maps/a.xml': { type: 'application/xml', body: '' },
      '/maps/b.xml': { type: 'application/xml', body: '' },
      '/docs/': html('The start page, linking to nothing.'),
      '/docs/one.html': html('A page the first named sitemap lists, about oystercatchers.'),
      '/docs/two.html': html('A page the second named sitemap lists, about skuas.'),
    });
    s.pages.set('/robots.txt', { body: `User-agent: *\nAllow: /\nSitemap: ${s.url}/maps/a.xml\nSitemap: ${s.url}/maps/b.xml\n` });
    const map = (path: string) => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${s.url}${path}</loc></url></urlset>`;
    s.pages.get('/maps/a.xml')!.body = map('/docs/one.html');
    s.pages.get('/maps/b.xml')!.body = map('/docs/two.html');
    const project = await client.project('robots sitemaps');
    const source = await client.add(project, { url: `${s.url}/docs/`, options: { delay_ms: 0 } });
    await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['docs/one.html', 'docs/two.html']);
  });

  it('removes a page answering 404 or 410, and keeps one the site cannot give for now', async () => {
    const s = await site({
      '/docs/': html('The start page about sandpipers.', ['gone.html', 'missing.html', 'down.html']),
      '/docs/gone.html': html('A page soon gone for good, about ruffs.'),
      '/docs/missing.html': html('A page soon missing, about stints.'),
      '/docs/down.html': html('A page soon down, about dotterels.'),
    });
    const project = await client.project('gone pages');
    const source = await client.add(project, { url: `${s.url}/docs/`, options: { delay_ms: 0 } });
    await client.passAfter(project, source.id, 0);
    const first = await client.settled(project, source.id, 4);
    s.pages.set('/docs/gone.html', { status: 410, body: '' });
    s.pages.delete('/docs/missing.html');
    s.pages.set('/docs/down.html', { status: 503, body: '' });
    const after = await client.sync(project, source.id);
    expect(after).toMatchObject({ status: 'active', last_result: expect.objectContaining({ deleted: 2 }) });
    const docs = await client.documents(project, source.id);
    expect([...docs.keys()].sort()).toEqual(['docs/', 'docs/down.html']);
    expect(docs.get('docs/down.html')!.id).toBe(first.get('docs/down.html')!.id);
  });

  it('makes a page larger than --max-upload-mb an error on that item, and takes the others', async () => {
    const s = await site({
      '/docs/': html('The start page about shanks.', ['big.txt']),
      '/docs/big.txt': { body: Buffer.alloc(1024 * 1024 + 1, 'word ') },
    });
    const project = await client.project('large page');
    const source = await client.add(project, { url: `${s.url}/docs/`, options: { delay_ms: 0 } });
    const done = await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['docs/']);
    expect(done.last_result).toMatchObject({ failed: 1 });
    expect(done.item_errors).toEqual({ count: 1, items: [expect.objectContaining({ path: 'docs/big.txt', error: expect.stringMatching(/^larger than 1 MiB/) })] });
    // Small enough now: taken on the next pass.
    s.pages.set('/docs/big.txt', { body: 'Small now, about redshanks.' });
    await client.sync(project, source.id);
    expect((await client.get(project, source.id)).item_errors?.count).toBe(0);
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['docs/', 'docs/big.txt']);
  });
});
