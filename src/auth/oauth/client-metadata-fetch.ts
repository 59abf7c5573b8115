import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';
import { refusedAddress } from './refused-address.js';

/**
 * Fetches client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25): the
 * client_id is an https URL and the document there is the client's metadata. Any browser that reaches the
 * authorize endpoint can make this server fetch a URL of its choosing, so the fetch is guarded against SSRF
 * here, once:
 * - https only, no user information, no redirects followed;
 * - the host is resolved first and every address it has is checked (refused-address.ts): loopback, private,
 *   CGNAT, unique-local and site-local are refused unless the operator allows private addresses (tests, private
 *   networks); link-local (cloud metadata at 169.254.169.254), unspecified, multicast, reserved addresses and
 *   IPv6 addresses that embed an IPv4 address (NAT64, 6to4, Teredo) always;
 * - the connection goes to the address that was checked (the request's `lookup` answers with it), so a DNS
 *   answer that changes between the check and the connect (rebinding) is never used;
 * - 5 s for the whole exchange, 64 KiB of body (the connection is cut as soon as more arrives), JSON only;
 * - documents are cached per their Cache-Control max-age, bounded to [60 s, 24 h], 5 min by default, in a
 *   bounded LRU (each entry carries its own expiry: the TTL is the response's, and `now` is the test seam).
 */

export class MetadataFetchError extends Error {
  override name = 'MetadataFetchError';
}

export interface FetchedDocument {
  /** The parsed JSON body. */
  json: unknown;
  /** True when it came over the network now, false from the cache. */
  fresh: boolean;
}

export interface MetadataFetchOptions {
  /** Let documents be fetched from loopback, private (RFC 1918, ULA) and CGNAT addresses. */
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  cacheEntries?: number;
  now?: () => number;
}

const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 24 * 3600_000;
const DEFAULT_TTL_MS = 5 * 60_000;

/** How long a response may be reused: its max-age, within [60 s, 24 h]; 5 min when it names none. */
export function cacheTtlMs(cacheControl: string | undefined): number {
  const maxAge = cacheControl && /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl)?.[1];
  if (cacheControl && /(?:^|,)\s*(no-store|no-cache)\b/i.test(cacheControl)) return MIN_TTL_MS;
  if (!maxAge) return DEFAULT_TTL_MS;
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, Number(maxAge) * 1000));
}

export class ClientMetadataFetcher {
  private readonly cache: LRUCache<string, { json: unknown; until: number }>;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly now: () => number;

  constructor(private readonly opts: MetadataFetchOptions) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.maxBytes = opts.maxBytes ?? 64 * 1024;
    this.cache = new LRUCache({ max: opts.cacheEntries ?? 1000 });
    this.now = opts.now ?? Date.now;
  }

  /**
   * The document at `url`, from the cache while it is fresh. Throws MetadataFetchError with the reason.
   * `beforeFetch` runs only when the network is about to be used (it may throw to stop it: the rate limit).
   */
  async get(url: URL, beforeFetch?: () => Promise<void>): Promise<FetchedDocument> {
    if (url.protocol !== 'https:') throw new MetadataFetchError('only https URLs are fetched');
    const key = url.href;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return { json: hit.json, fresh: false };
    this.cache.delete(key);
    await beforeFetch?.();
    const { json, ttlMs } = await this.fetch(url);
    this.cache.set(key, { json, until: this.now() + ttlMs });
    return { json, fresh: true };
  }

  /** Resolves the host and picks the address to connect to; refuses when any of its addresses is refused. */
  private async address(url: URL): Promise<{ address: string; family: number }> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: { address: string; family: number }[];
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await dnsLookup(host, { all: true, verbatim: true });
      } catch (err) {
        throw new MetadataFetchError(`the host ${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    if (addresses.length === 0) throw new MetadataFetchError(`the host ${host} has no address`);
    for (const a of addresses) {
      const why = refusedAddress(a.address, this.opts.allowPrivate);
      // Every address is checked: a host with one public and one internal address could be made to connect to either.
      if (why) throw new MetadataFetchError(`the address ${a.address}${a.address === host ? '' : ` (of ${host})`} is ${why}`);
    }
    return addresses[0]!;
  }

  private async fetch(url: URL): Promise<{ json: unknown; ttlMs: number }> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const pinned = await Promise.race([
      this.address(url),
      new Promise<never>((_, reject) => deadline.addEventListener('abort', () => reject(new MetadataFetchError(`no answer within ${this.timeoutMs / 1000} s`)))),
    ]);
    // The connection may only go to the address checked above (Node asks with `all` when it races families).
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    return new Promise((resolve, reject) => {
      const fail = (message: string) => {
        req.destroy();
        reject(new MetadataFetchError(message));
      };
      const onError = (err: Error) => {
        if (deadline.aborted) fail(`no complete answer within ${this.timeoutMs / 1000} s`);
        else fail(`the request failed (${(err as NodeJS.ErrnoException).code ?? err.message})`);
      };
      const req = request(url, { method: 'GET', lookup, headers: { accept: 'application/json' }, signal: deadline, agent: false }, (res) => {
        res.on('error', onError);
        this.read(res, resolve, fail);
      });
      req.on('error', onError);
      req.end();
    });
  }

  private read(res: IncomingMessage, resolve: (r: { json: unknown; ttlMs: number }) => void, fail: (message: string) => void): void {
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400) return fail(`it answered with a redirect (${status}), and redirects are not followed`);
    if (status !== 200) return fail(`it answered HTTP ${status}`);
    const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) return fail(`its content type is ${type || 'missing'}, not application/json`);
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > this.maxBytes) return fail(`it is larger than ${this.maxBytes / 1024} KiB`);
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Cut the connection at once: nothing beyond the limit is buffered.
      if (size > this.maxBytes) return fail(`it is larger than ${this.maxBytes / 1024} KiB`);
      chunks.push(chunk);
    });
    res.on('end', () => {
      if (size > this.maxBytes) return;
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail('its body is not valid JSON');
      }
      resolve({ json, ttlMs: cacheTtlMs(res.headers['cache-control']) });
    });
  }
}
