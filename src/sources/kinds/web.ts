/**
 * `web`: the pages of a site (`https://docs.example.com/handbook/`), from its sitemap (sitemap.xml, or those robots.txt
 * names, or the `sitemap` option) or, without one, a bounded crawl of the links under the URL, on its origin only.
 * robots.txt is followed (`robots-parser`, as user agent "docsearch"), and so is its Crawl-delay when it asks for
 * more than the `delay_ms` option. Every request is conditional (If-None-Match / If-Modified-Since with the version
 * the last pass recorded), so an unchanged page costs a 304; pages the last pass listed are asked again even when
 * nothing links to them any more, and a page that answers 404 or 410 is gone. HTML pages go through the HTML parser;
 * linked PDFs and office files are documents too. Redirects are followed on the same origin only, and each hop is
 * checked by the sources' agents like the first.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { extname, join, posix } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { SaxesParser } from 'saxes';
import { z } from 'zod';
import { ItemError, type ListedItem, type ListRequest, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import type { Reach } from '../reach.js';
import { globOptions, noUserinfo } from './options.js';
import { MAX_SOURCE_URL_CHARS } from '../../core/source-limits.js';

const Options = z.strictObject({
  sitemap: z.url({ protocol: /^https?$/ }).max(MAX_SOURCE_URL_CHARS).refine(noUserinfo, 'a sitemap URL takes no user name or password (they would be shown with the options)').optional().describe('the sitemap to list pages from (default: the site\'s sitemap.xml or those robots.txt names; none: a crawl)'),
  max_pages: z.number().int().min(1).max(100_000).optional().describe('most pages a pass lists (default 1000)'),
  delay_ms: z.number().int().min(0).max(60_000).optional().describe('least time between two requests (default 1000; robots.txt may ask for more)'),
  ...globOptions,
});

/** robots-parser as it is (a CommonJS function; its typings declare it in a way NodeNext cannot call). */
interface Robots {
  isDisallowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, text: string) => Robots;

const USER_AGENT = 'docsearch';
const MAX_REDIRECTS = 5;
/** New addresses a pass may queue per page of `max_pages` (those that answer no page count too). */
const FRONTIER_PER_PAGE = 10;
/** Largest robots.txt or sitemap read. */
const MAX_META_BYTES = 10 * 1024 * 1024;
/** Links worth following: pages, and the document types the pipeline reads. */
const FOLLOWED = new Set(['', '.html', '.htm', '.xhtml', '.php', '.asp', '.aspx', '.jsp', '.pdf', '.docx', '.doc', '.odt', '.rtf', '.epub', '.pptx', '.ppt', '.odp', '.xlsx', '.xls', '.ods', '.csv', '.tsv', '.txt', '.md']);

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** Where it was answered from, after redirects. */
  url: URL;
}

class WebConnection implements SourceConnection {
  private readonly bodies = new Map<string, string>();
  /** Pages this pass could not download, with why (larger than the limit): each an error on its item. */
  private readonly refused = new Map<string, ItemError>();
  private lastRequest = 0;
  private delayMs: number;
  private readonly bodyDir: string;

  constructor(
    private readonly start: URL,
    private readonly options: z.infer<typeof Options>,
    private readonly reach: Reach,
    scratchDir: string,
    private readonly maxBytes: number,
    private readonly signal: AbortSignal,
  ) {
    this.delayMs = options.delay_ms ?? 1000;
    this.bodyDir = join(scratchDir, 'pages');
  }

  /** One GET, redirects followed on the origin; a body larger than `limit` is cut off and refused. */
  private async get(url: URL, headers: Record<string, string> = {}, limit = this.maxBytes): Promise<Answer> {
    let at = url;
    for (let hop = 0; ; hop++) {
      const wait = this.lastRequest + this.delayMs - Date.now();
      if (wait > 0) await delay(wait, undefined, { signal: this.signal });
      this.lastRequest = Date.now();
      const res = await this.once(at, headers, limit);
      if (res.status >= 300 && res.status < 400 && res.status !== 304 && res.headers.location) {
        const next = new URL(res.headers.location, at);
        if (next.origin !== this.start.origin || hop >= MAX_REDIRECTS) return { ...res, status: 0 };
        at = next;
        continue;
      }
      return { ...res, url: at };
    }
  }

  private once(url: URL, headers: Record<string, string>, limit: number): Promise<Answer> {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = url.protocol === 'https:' ? this.reach.httpsAgent : this.reach.httpAgent;
    return new Promise((resolve, reject) => {
      const req = request(url, { agent, headers: { 'user-agent': USER_AGENT, accept: '*/*', ...headers }, signal: this.signal, timeout: this.reach.timeoutMs }, (res) => {
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (b: Buffer) => {
          size += b.length;
          if (size > limit) {
            req.destroy();
            reject(new ItemError(`larger than ${Math.round(limit / 1024 / 1024)} MiB`));
          } else parts.push(b);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts), url }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(this.reach.silence())));
      req.on('error', reject);
      req.end();
    });
  }

  /** A URL as an item's path: its path and query on the origin (no fragment). */
  private pathOf(url: URL): string {
    return `${url.pathname}${url.search}`.replace(/^\//, '') || '/';
  }

  private urlOf(path: string): URL {
    return new URL(path === '/' ? '/' : `/${path}`, this.start.origin);
  }

  /** Inside the source: its origin, under the start URL's folder. */
  private inScope(url: URL): boolean {
    const base = this.start.pathname.endsWith('/') ? this.start.pathname : posix.dirname(this.start.pathname) + '/';
    return url.origin === this.start.origin && (url.pathname + '/').startsWith(base) && /^https?:$/.test(url.protocol);
  }

  private async robots(): Promise<Robots> {
    const url = new URL('/robots.txt', this.start.origin);
    const res = await this.get(url, {}, MAX_META_BYTES).catch((err: Error) => {
      throw new SourceError(`the site ${this.start.origin} could not be reached: ${err.message}`);
    });
    const robots = robotsParser(url.href, res.status === 200 ? res.body.toString('utf8') : '');
    const crawlDelay = robots.getCrawlDelay(USER_AGENT);
    if (crawlDelay !== undefined) this.delayMs = Math.max(this.delayMs, Math.min(crawlDelay * 1000, 60_000));
    return robots;
  }

  /** Page URLs of a sitemap (and of the sitemaps a sitemap index names, one level down). */
  private async sitemap(url: URL, depth = 0): Promise<URL[] | null> {
    const res = await this.get(url, {}, MAX_META_BYTES);
    if (res.status !== 200) return null;
    const locs: { loc: string; index: boolean }[] = [];
    const parser = new SaxesParser();
    let inLoc = false;
    let index = false;
    let text = '';
    const local = (name: string) => name.replace(/^.*:/, '');
    parser.on('opentag', (tag) => {
      if (local(tag.name) === 'sitemapindex') index = true;
      if (local(tag.name) === 'loc') {
        inLoc = true;
        text = '';
      }
    });
    parser.on('text', (t) => {
      if (inLoc) text += t;
    });
    parser.on('closetag', (tag) => {
      if (local(tag.name) !== 'loc') return;
      inLoc = false;
      locs.push({ loc: text.trim(), index });
    });
    try {
      parser.write(res.body.toString('utf8')).close();
    } catch (err) {
      throw new SourceError(`the sitemap ${url.href} is not valid XML: ${(err as Error).message}`);
    }
    const out: URL[] = [];
    for (const { loc, index: nested } of locs) {
      const u = URL.canParse(loc) ? new URL(loc) : null;
      if (!u) continue;
      if (nested) {
        if (depth < 1) out.push(...((await this.sitemap(u, depth + 1)) ?? []));
      } else out.push(u);
    }
    return out;
  }

  async list(request: ListRequest) {
    await mkdir(this.bodyDir, { recursive: true });
    const robots = await this.robots();
    const sitemaps = this.options.sitemap ? [this.options.sitemap] : robots.getSitemaps().length ? robots.getSitemaps() : [new URL('/sitemap.xml', this.start.origin).href];
    let seeds: URL[] | null = null;
    for (const s of sitemaps) {
      const found = await this.sitemap(new URL(s)).catch((err: unknown) => {
        if (this.options.sitemap) throw err;
        return null;
      });
      if (found) seeds = [...(seeds ?? []), ...found];
    }
    if (this.options.sitemap && seeds === null) throw new SourceError(`the sitemap ${this.options.sitemap} could not be read`);
    // A site's sitemap that names nothing under the source's URL leaves that part to a crawl.
    seeds = seeds?.filter((u) => this.inScope(u)) ?? null;
    if (seeds?.length === 0 && !this.options.sitemap) seeds = null;
    const crawl = seeds === null;
    const max = this.options.max_pages ?? 1000;
    const known = new Set(request.knownPaths());
    // Addresses are queued once each, and at most FRONTIER_PER_PAGE new ones (not recorded by an earlier pass) per
    // page of max_pages: a page answering 404 is not a page listed, and a site whose pages each linked to thousands
    // of new addresses (a link loop minting them, a hostile site) held them all in memory, and asked for them all.
    const queued = new Set<string>();
    let budget = max * FRONTIER_PER_PAGE;
    const take = (url: URL): boolean => {
      url.hash = '';
      const path = this.pathOf(url);
      if (queued.has(path) || !this.inScope(url)) return false;
      if (!known.has(path)) {
        if (budget === 0) return false;
        budget--;
      }
      queued.add(path);
      return true;
    };
    // Recorded pages are asked for again whatever links to them (a page may have lost its last link but still exist).
    const queue: URL[] = [...(seeds ?? [this.start]).filter(take), ...[...known].map((p) => this.urlOf(p))];
    const seen = new Set<string>();
    const self = this;
    async function* items(): AsyncIterable<ListedItem> {
      let listed = 0;
      while (queue.length > 0 && listed < max) {
        const url = queue.shift()!;
        url.hash = '';
        const path = self.pathOf(url);
        if (seen.has(path) || !self.inScope(url) || robots.isDisallowed(url.href, USER_AGENT)) continue;
        seen.add(path);
        const before = request.known(path);
        const conditional: Record<string, string> = {};
        if (before?.startsWith('etag:')) conditional['if-none-match'] = before.slice(5);
        else if (before?.startsWith('lm:')) conditional['if-modified-since'] = before.slice(3);
        let res: Answer;
        try {
          res = await self.get(url, conditional);
        } catch (err) {
          if (self.signal.aborted) throw err;
          // Too large: listed with no version (nothing was downloaded), so the pass asks for it and records why.
          if (err instanceof ItemError) {
            self.refused.set(path, err);
            listed++;
            yield { path, version: '' };
            continue;
          }
          // Unreachable for now: a known page stays as it was, a new one waits for the next pass.
          if (before) {
            listed++;
            yield { path, version: before };
          }
          continue;
        }
        if (res.status === 304 && before) {
          listed++;
          yield { path, version: before };
          continue;
        }
        if (res.status !== 200) {
          // 404 and 410: gone (not listed). Anything else: as it was, like an unreachable page.
          if (before && res.status !== 404 && res.status !== 410) {
            listed++;
            yield { path, version: before };
          }
          continue;
        }
        const etag = res.headers.etag;
        const modified = res.headers['last-modified'];
        const version = etag ? `etag:${etag}` : modified ? `lm:${modified}` : `sha:${createHash('sha256').update(res.body).digest('hex')}`;
        const file = join(self.bodyDir, createHash('sha256').update(path).digest('hex'));
        await writeFile(file, res.body);
        self.bodies.set(path, file);
        if (crawl && /html/.test(String(res.headers['content-type'] ?? ''))) for (const link of await links(res.body, res.url)) if (take(link)) queue.push(link);
        listed++;
        yield { path, version };
      }
    }
    return { complete: true, items: items(), cursor: () => null };
  }

  async fetch(item: ListedItem) {
    const refused = this.refused.get(item.path);
    if (refused) throw refused;
    const file = this.bodies.get(item.path);
    if (!file) throw new ItemError('the page was not downloaded in this pass');
    const url = this.urlOf(item.path);
    const name = nameOf(url);
    return { body: await readFile(file), filename: name, metadata: { url: url.href } };
  }

  async close() {
    await rm(this.bodyDir, { recursive: true, force: true });
  }
}

/**
 * A page's name as a person reads it: its address's last segment decoded (`Caf%C3%A9.html` is `Café.html`), or as
 * sent when it decodes to no text (a Latin-1 `%E9`) or to a folder separator.
 */
function nameOf(url: URL): string {
  const segment = posix.basename(url.pathname) || 'index.html';
  try {
    const decoded = decodeURIComponent(segment);
    return /[/\\]/.test(decoded) ? segment : decoded;
  } catch {
    return segment;
  }
}

/** The links of an HTML page worth following: pages and documents, resolved against the page. */
async function links(body: Buffer, base: URL): Promise<URL[]> {
  // Loaded with the first page crawled: a daemon with no web source does not hold it (docs/ingest.md).
  const { Parser } = await import('htmlparser2');
  const out: URL[] = [];
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name !== 'a' || !attrs.href) return;
      try {
        const url = new URL(attrs.href, base);
        if (FOLLOWED.has(extname(url.pathname).toLowerCase())) out.push(url);
      } catch {
        // not a URL
      }
    },
  });
  parser.end(body.toString('utf8'));
  return out;
}

export const web: SourceKind = {
  name: 'web',
  schemes: [],
  options: Options,
  secretOptions: [],
  urlCredentials: null,
  resumable: false,
  async check(url) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'a web source is an http(s):// URL of a site or a part of one';
    return null;
  },
  async connect(setup, env) {
    return new WebConnection(setup.url, setup.options as z.infer<typeof Options>, env.reach, env.scratchDir, env.maxItemBytes, env.signal);
  },
};
