/**
 * Shared mode: searches reach the object store through this relay on the replica's loopback (VectorStore's
 * `searchConnection`), which serves the index's immutable files from a disk cache (index-file-cache.ts) and passes
 * every other request on. LanceDB (0.33) keeps decoded indexes and manifests in memory but reads data pages from
 * the store on every search: on RGW a hybrid search made dozens of requests and took ten times the same reads on a
 * local disk (docs/BENCHMARKS.md#object-storage). LanceDB has no disk cache of its own, and its object-store client takes only an endpoint, so
 * the cache sits at the endpoint.
 *
 * LanceDB signs its requests with a key made for this process (random, never stored or logged); the relay checks
 * that signature, so another local user who finds the port can neither read the cache nor use the store's
 * credentials, and signs what it passes on with the store's own credentials.
 */
import { randomBytes } from 'node:crypto';
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { S3Location } from '../objects/location.js';
import { type Credentials, queryObject, s3Signer, SignatureVerifier } from '../objects/sigv4.js';
import { BLOCK_BYTES, type IndexFileCache, type ObjectMeta } from './index-file-cache.js';

/** Files a Lance table never rewrites: data fragments, index files, deletion files, transaction files. */
const IMMUTABLE = /\.lance\/(?:data|_indices|_deletions|_transactions)\//;

/** Hop-by-hop headers and those the relay sets itself. */
const NOT_FORWARDED = new Set(['host', 'authorization', 'x-amz-date', 'x-amz-security-token', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'expect']);

/** Adjacent missing blocks are fetched in one request, up to this many bytes. */
const MAX_FETCH_BYTES = 8 * BLOCK_BYTES;

export interface RelayStats {
  /** Requests LanceDB made. */
  requests: number;
  /** Reads of cacheable files answered from disk alone. */
  hits: number;
  /** Requests made to the store. */
  upstream: number;
}

class UpstreamError extends Error {
  constructor(readonly status: number) {
    super(`the object store answered ${status}`);
  }
}

interface Range {
  start: number;
  /** Inclusive. */
  end: number;
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` against a size; null when absent, 'other' for what is passed on (multiple or unsatisfiable ranges). */
function parseRange(header: string | undefined, size: number): Range | null | 'other' {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'other';
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start <= end && start < size ? { start, end } : 'other';
}

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

async function readBody(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of res) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export class IndexCacheRelay {
  /** The key LanceDB signs with; only this process knows it. */
  readonly key = { accessKeyId: `DSR${randomBytes(12).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(32).toString('base64url') };
  readonly stats: RelayStats = { requests: 0, hits: 0, upstream: 0 };
  private readonly signer;
  private readonly verifier: SignatureVerifier;
  private readonly upstream: URL;
  private readonly agent: HttpAgent;
  private readonly inflight = new Map<string, Promise<Buffer>>();
  private server?: Server;
  private port = 0;

  constructor(
    private readonly loc: S3Location,
    credentials: Credentials,
    private readonly cache: IndexFileCache,
  ) {
    this.signer = s3Signer(credentials, loc.region);
    this.verifier = new SignatureVerifier(this.key, loc.region);
    // Path-style to a custom endpoint, as the SDK and LanceDB are configured; virtual-hosted on AWS itself.
    this.upstream = new URL(loc.endpoint ?? `https://${loc.bucket}.s3.${loc.region}.amazonaws.com`);
    this.agent = this.upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 64 }) : new HttpAgent({ keepAlive: true, maxSockets: 64 });
  }

  /** http://127.0.0.1:PORT, for LanceDB's `endpoint`. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer({ keepAlive: true }, (req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(503).end();
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.agent.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.requests++;
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const query = q < 0 ? '' : raw.slice(q + 1);
    const method = req.method ?? 'GET';
    const problem = await this.verifier.verify({ method, path, query, headers: req.headers });
    if (problem) {
      req.resume();
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`${problem}\n`);
      return;
    }
    if (path !== `/${this.loc.bucket}` && !path.startsWith(`/${this.loc.bucket}/`)) {
      req.resume();
      res.writeHead(403, { 'content-type': 'text/plain' }).end('not this store\'s bucket\n');
      return;
    }
    const cacheable = (method === 'GET' || method === 'HEAD') && query === '' && IMMUTABLE.test(path) && !Object.keys(req.headers).some((h) => h.startsWith('if-'));
    if (cacheable && (await this.fromCache(method, path, header(req.headers.range), res))) return;
    await this.forward(req, method, path, query, res);
  }

  /** The upstream path and host for a path-style `/<bucket>/<key>`. */
  private target(path: string): { host: string; path: string } {
    const base = this.upstream.pathname.replace(/\/+$/, '');
    if (this.loc.endpoint) return { host: this.upstream.host, path: `${base}${path}` };
    return { host: this.upstream.host, path: path.slice(this.loc.bucket.length + 1) || '/' };
  }

  /** Sends a request to the store, signed with its credentials. */
  private async send(method: string, path: string, query: string, headers: Record<string, string>, body?: IncomingMessage): Promise<IncomingMessage> {
    this.stats.upstream++;
    const t = this.target(path);
    const signed = await this.signer.sign({ method, protocol: this.upstream.protocol, hostname: t.host, path: t.path, query: queryObject(query), headers: { ...headers, host: t.host } });
    const send = this.upstream.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const out = send({ agent: this.agent, protocol: this.upstream.protocol, hostname: this.upstream.hostname, port: this.upstream.port, method, path: t.path + (query ? `?${query}` : ''), headers: signed.headers as OutgoingHttpHeaders });
      out.once('response', resolve);
      out.once('error', reject);
      if (body) {
        body.once('error', (err) => out.destroy(err));
        body.pipe(out);
      } else out.end();
    });
  }

  private async forward(req: IncomingMessage, method: string, path: string, query: string, res: ServerResponse): Promise<void> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || NOT_FORWARDED.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    let answer: IncomingMessage;
    try {
      answer = await this.send(method, path, query, headers, req);
    } catch {
      // Unreachable store: a 503 is what LanceDB's client retries, as it would the store's own.
      if (!res.headersSent) res.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    const out: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && name !== 'connection' && name !== 'keep-alive') out[name] = value;
    res.writeHead(answer.statusCode ?? 502, out);
    answer.pipe(res);
  }

  /** Size, ETag and date of a cacheable object: from the cache, else one HEAD to the store (then cached). */
  private async meta(path: string): Promise<ObjectMeta | undefined> {
    const known = await this.cache.meta(path);
    if (known) return known;
    const answer = await this.send('HEAD', path, '', {});
    answer.resume();
    const size = Number(answer.headers['content-length']);
    const etag = header(answer.headers.etag);
    const lastModified = header(answer.headers['last-modified']);
    if (answer.statusCode !== 200 || !Number.isFinite(size) || !etag || !lastModified) return undefined;
    const meta = { size, etag, lastModified };
    await this.cache.putMeta(path, meta).catch(() => undefined);
    return meta;
  }

  private blockBytes(meta: ObjectMeta, n: number): number {
    return Math.min(BLOCK_BYTES, meta.size - n * BLOCK_BYTES);
  }

  /** Blocks `first..last` from the store in one ranged GET, each kept in the cache. */
  private async fetchBlocks(path: string, meta: ObjectMeta, first: number, last: number): Promise<Buffer[]> {
    const start = first * BLOCK_BYTES;
    const end = Math.min(meta.size, (last + 1) * BLOCK_BYTES) - 1;
    const answer = await this.send('GET', path, '', { range: `bytes=${start}-${end}` });
    const body = await readBody(answer);
    if (answer.statusCode !== 206 && answer.statusCode !== 200) throw new UpstreamError(answer.statusCode ?? 502);
    if (header(answer.headers.etag) !== meta.etag) {
      // Not the bytes that were cached: forget them and let the request pass through.
      await this.cache.drop(path);
      throw new UpstreamError(409);
    }
    const data = answer.statusCode === 200 ? body.subarray(start, end + 1) : body;
    if (data.length !== end - start + 1) throw new UpstreamError(502);
    const blocks: Buffer[] = [];
    for (let n = first; n <= last; n++) {
      const block = data.subarray((n - first) * BLOCK_BYTES, (n - first) * BLOCK_BYTES + this.blockBytes(meta, n));
      blocks.push(block);
      // A cache that cannot write (disk full) still answers from what was fetched.
      await this.cache.putBlock(path, n, block).catch(() => undefined);
    }
    return blocks;
  }

  /**
   * Bytes `start..end` (inclusive) of the object, block by block: from disk where a block is cached, the missing
   * blocks fetched (adjacent ones in one request, each block once however many reads want it).
   */
  private async slices(path: string, meta: ObjectMeta, start: number, end: number): Promise<{ parts: Buffer[]; fetched: boolean }> {
    const first = Math.floor(start / BLOCK_BYTES);
    const last = Math.floor(end / BLOCK_BYTES);
    const within = (n: number): [number, number] => [Math.max(0, start - n * BLOCK_BYTES), Math.min(this.blockBytes(meta, n), end - n * BLOCK_BYTES + 1)];
    const parts: (Buffer | Promise<Buffer>)[] = [];
    const missing: number[] = [];
    for (let n = first; n <= last; n++) {
      const [from, to] = within(n);
      const pending = this.inflight.get(`${path}#${n}`);
      const cached = pending ? pending.then((block) => block.subarray(from, to)) : await this.cache.read(path, n, this.blockBytes(meta, n), from, to);
      parts.push(cached ?? Buffer.alloc(0));
      if (!cached) missing.push(n);
    }
    for (let i = 0; i < missing.length; ) {
      let j = i;
      while (j + 1 < missing.length && missing[j + 1] === missing[j]! + 1 && (missing[j + 1]! - missing[i]! + 1) * BLOCK_BYTES <= MAX_FETCH_BYTES) j++;
      const from = missing[i]!;
      const to = missing[j]!;
      const run = this.fetchBlocks(path, meta, from, to);
      for (let n = from; n <= to; n++) {
        const key = `${path}#${n}`;
        const block = run.then((blocks) => blocks[n - from]!);
        this.inflight.set(key, block);
        const forget = () => this.inflight.delete(key);
        block.then(forget, forget);
        parts[n - first] = block.then((b) => b.subarray(...within(n)));
      }
      i = j + 1;
    }
    return { parts: await Promise.all(parts), fetched: missing.length > 0 };
  }

  /** Answers a read of an immutable file from the cache; false when it is the store's to answer (not found, odd range). */
  private async fromCache(method: string, path: string, rangeHeader: string | undefined, res: ServerResponse): Promise<boolean> {
    const meta = await this.meta(path);
    if (!meta) return false;
    const headers: OutgoingHttpHeaders = { etag: meta.etag, 'last-modified': meta.lastModified, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (method === 'HEAD') {
      this.stats.hits++;
      res.writeHead(200, { ...headers, 'content-length': meta.size }).end();
      return true;
    }
    const range = parseRange(rangeHeader, meta.size);
    if (range === 'other' || meta.size === 0) return false;
    const { start, end } = range ?? { start: 0, end: meta.size - 1 };
    // A read larger than a quarter of the cache would only push out what searches use.
    if (end - start + 1 > this.cache.maxBytes / 4) return false;
    let got: { parts: Buffer[]; fetched: boolean };
    try {
      got = await this.slices(path, meta, start, end);
    } catch (err) {
      if (err instanceof UpstreamError) return false;
      throw err;
    }
    if (!got.fetched) this.stats.hits++;
    const body = Buffer.concat(got.parts);
    if (range) res.writeHead(206, { ...headers, 'content-length': body.length, 'content-range': `bytes ${start}-${end}/${meta.size}` });
    else res.writeHead(200, { ...headers, 'content-length': body.length });
    res.end(body);
    return true;
  }
}
