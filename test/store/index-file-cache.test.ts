/**
 * A replica's disk cache of the index's immutable files (src/store/lancedb/index-cache-relay.ts), on a real Ceph
 * RADOS Gateway: LanceDB reads through it, and a request log between the cache and the gateway shows what still
 * reaches the store. Vectors are synthetic: this tests the store, not a model.
 */
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalEvents, LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex, type ChunkRow } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { parseS3Location } from '../../src/store/objects/location.js';
import { S3ObjectStore } from '../../src/store/objects/s3.js';
import { s3Signer } from '../../src/store/objects/sigv4.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { logS3Requests, type S3RequestLog } from '../helpers/s3-request-log.js';

const SKIP = rgwUnavailable();
const DIM = 16;
const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: DIM };
const HOUR = 3600_000;
const MiB = 1024 * 1024;
const WORDS = ['penguin', 'glacier', 'krill', 'colony', 'ocean', 'nest', 'ice', 'storm', 'winter', 'chick', 'feather', 'dive'];
/** Files a Lance table writes once and never changes: what the cache may answer for. */
const IMMUTABLE = /\.lance\/(data|_indices|_deletions|_transactions)\//;

function vector(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIM }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function rows(doc: string, count: number, from = 0): ChunkRow[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const text = `${doc} ${Array.from({ length: 40 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(' ')} item${i}`;
    return { id: `${doc}:${i}`, user_id: 'u1', project_id: 'p', document_id: doc, chunk_index: i, text, search_text: text, heading: null, page_start: null, page_end: null, vector: vector(i) };
  });
}

describe.skipIf(SKIP !== null)(`the index file cache on S3 (Ceph RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  let log: S3RequestLog;
  let dir: string;
  let n = 0;
  const opened: { close(): Promise<void> }[] = [];
  const saved = { ...process.env };
  beforeAll(async () => {
    rgw = await startRgw();
    log = await logS3Requests(rgw.endpoint);
    // As a replica runs: the AWS variables name the store itself. LanceDB reads them too, and must still go
    // through the relay (it once took AWS_ENDPOINT_URL over its endpoint option, and the relay's key to RGW).
    Object.assign(process.env, rgw.env());
    dir = await mkdtemp(join(tmpdir(), 'docsearch-file-cache-'));
  });
  afterEach(async () => {
    for (const c of opened.splice(0).reverse()) await c.close();
  });
  afterAll(async () => {
    process.env = saved;
    await log?.close();
    await rgw?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const library = () => `s3://${rgw.bucket}/lib-${n++}`;

  /** A replica's index on the library: with a file cache (its directory and size), its store requests logged. */
  async function replica(url: string, cache?: { dir: string; maxBytes: number }, readConsistencyS = 0) {
    const loc = parseS3Location(url, { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint });
    const root = await S3ObjectStore.connect(loc);
    const store = await VectorStore.openS3(loc, root.at('lancedb'), {
      locks: new LocalLocks(),
      events: new LocalEvents(),
      keepSupersededMs: HOUR,
      funnelCommits: false,
      readConsistencyS,
      ...(cache ? { fileCache: { ...cache, credentials: loc.credentials! } } : {}),
    });
    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
    const handle = {
      store,
      index,
      async close() {
        await index.close();
        await store.close();
        root.close();
      },
    };
    opened.push(handle);
    return handle;
  }

  /** A hybrid search's three reads, as the daemon makes them. */
  async function search(index: ChunkIndex, seed: number) {
    const vec = await index.vectorSearch({ userId: 'u1', vector: vector(seed), limit: 20 });
    const kw = await index.keywordSearch({ userId: 'u1', query: `krill item${seed}`, limit: 50 });
    const shown = await index.getMany('u1', [...vec.slice(0, 10), ...kw.slice(0, 10)]);
    return { vec: vec.map((h) => [h.id, h._distance]), kw: kw.map((h) => [h.id, h._score]), shown: shown.map((c) => [c.id, c.text]) };
  }

  const dataRequests = () => log.requests().filter((r) => IMMUTABLE.test(r.path));
  /** Listings of a table's versions: how LanceDB checks for a newer one. */
  const versionLists = () => log.requests().filter((r) => r.method === 'GET' && r.query.includes('list-type') && r.query.includes('_versions'));

  async function fill(url: string, count = 600) {
    const writer = await replica(url);
    for (let i = 0; i < count; i += 100) await writer.index.add(rows('d1', 100, i), EMBEDDER);
    await writer.index.optimize();
    return writer;
  }

  it('answers the same as the store, and a repeated search reads no data, index or deletion file from the store', async () => {
    const url = library();
    const writer = await fill(url);
    const cached = await replica(url, { dir: join(dir, 'a'), maxBytes: 256 * MiB });
    for (const seed of [3, 250, 599]) {
      const direct = await search(writer.index, seed);
      const first = await search(cached.index, seed);
      expect(first).toEqual(direct);
      expect(first.shown.length).toBeGreaterThan(5);
      log.reset();
      expect(await search(cached.index, seed)).toEqual(direct);
      expect(dataRequests()).toEqual([]);
    }
    expect(cached.store.relay!.stats.hits).toBeGreaterThan(0);
  });

  it("sees another replica's deletions and new rows: what changed is read from the store, the rest from disk", async () => {
    const url = library();
    const writer = await fill(url);
    const cached = await replica(url, { dir: join(dir, 'b'), maxBytes: 256 * MiB });
    expect((await search(cached.index, 10)).shown.map(([id]) => id)).toContain('d1:10');
    await writer.index.deleteDocument('d1');
    await writer.index.add(rows('d2', 50), EMBEDDER);
    log.reset();
    const after = await search(cached.index, 10);
    expect(after).toEqual(await search(writer.index, 10));
    expect(after.shown.map(([id]) => id)).toContain('d2:10');
    expect(after.shown.every(([id]) => String(id).startsWith('d2:'))).toBe(true);
    // The new fragment and the deletion files were fetched; nothing cached stood in for them.
    expect(dataRequests().some((r) => /\/(data|_deletions)\//.test(r.path))).toBe(true);
  });

  it("writes go to the store directly, and the replica's next search through the cache sees them at once", async () => {
    const url = library();
    await fill(url, 200);
    // An hour between version checks: only catching up after its own commit can show the new rows.
    const cached = await replica(url, { dir: join(dir, 'own'), maxBytes: 256 * MiB }, 3600);
    expect((await cached.index.keywordSearch({ userId: 'u1', query: 'item999', limit: 5 })).length).toBe(0);
    const relayed = cached.store.relay!.stats.requests;
    await cached.index.add(rows('d9', 1, 999), EMBEDDER);
    await cached.index.deleteDocument('d1');
    expect(cached.store.relay!.stats.requests).toBe(relayed);
    log.reset();
    expect((await cached.index.keywordSearch({ userId: 'u1', query: 'item999', limit: 5 })).map((h) => h.id)).toEqual(['d9:999']);
    expect((await search(cached.index, 5)).shown.every(([id]) => String(id).startsWith('d9:'))).toBe(true);
    expect(cached.store.relay!.stats.requests).toBeGreaterThan(relayed);
    // It caught up with its own commits by their version numbers: no listing of the versions.
    expect(versionLists()).toEqual([]);
  });

  it("checks for other replicas' commits, with no event, in the background of a search past the interval", async () => {
    const url = library();
    const writer = await fill(url, 200);
    const cached = await replica(url, { dir: join(dir, 'recheck'), maxBytes: 256 * MiB }, 1);
    const found = async () => (await cached.index.keywordSearch({ userId: 'u1', query: 'item777', limit: 5 })).map((h) => h.id);
    expect(await found()).toEqual([]);
    await writer.index.add(rows('d7', 1, 777), EMBEDDER);
    log.reset();
    // Within the interval: the view it has, and no request about versions.
    expect(await found()).toEqual([]);
    expect(versionLists()).toEqual([]);
    await sleep(1100);
    // Past it: this search answers from the view it has, and starts a check that later searches see the end of.
    expect(await found()).toEqual([]);
    expect(await eventually(async () => (await found()).length === 1, 5000)).toBe(true);
    expect(await found()).toEqual(['d7:777']);
    expect(versionLists().length).toBe(1);
    expect((await search(cached.index, 777)).shown.map(([id]) => id)).toContain('d7:777');
  });

  it('keeps to its size limit, and a restarted replica answers from what an earlier run left on disk', async () => {
    const url = library();
    const writer = await fill(url, 1500);
    const small = join(dir, 'c');
    const limit = 3 * MiB;
    let cached = await replica(url, { dir: small, maxBytes: limit });
    for (const seed of [1, 700, 1400]) expect(await search(cached.index, seed)).toEqual(await search(writer.index, seed));
    const onDisk = () => readdirSync(small, { recursive: true, withFileTypes: true }).reduce((sum, e) => sum + (e.isFile() ? statSync(join(e.parentPath, e.name)).size : 0), 0);
    expect(onDisk()).toBeGreaterThan(0);
    expect(onDisk()).toBeLessThanOrEqual(limit);

    const big = join(dir, 'd');
    cached = await replica(url, { dir: big, maxBytes: 256 * MiB });
    await search(cached.index, 42);
    await cached.close();
    opened.splice(opened.indexOf(cached), 1);
    const again = await replica(url, { dir: big, maxBytes: 256 * MiB });
    const direct = await search(writer.index, 42);
    log.reset();
    expect(await search(again.index, 42)).toEqual(direct);
    expect(dataRequests()).toEqual([]);
  });

  it('refuses a request not signed with its own key, even one signed with the store\'s key', async () => {
    const url = library();
    await fill(url, 100);
    const cached = await replica(url, { dir: join(dir, 'e'), maxBytes: 256 * MiB });
    await search(cached.index, 1);
    const relay = cached.store.relay!;
    const endpoint = new URL(relay.endpoint);
    const dataFile = log.requests().find((r) => /\/data\/.*\.lance$/.test(r.path))!.path;
    expect(dataFile).toBeTruthy();
    const get = async (key: { accessKeyId: string; secretAccessKey: string } | null, path = dataFile, tamper?: Record<string, string>) => {
      const headers: Record<string, string> = { host: endpoint.host, range: 'bytes=0-15', 'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' };
      const signed = key ? (await s3Signer(key, rgw.region).sign({ method: 'GET', protocol: 'http:', hostname: endpoint.host, path, query: {}, headers })).headers : headers;
      const res = await fetch(`${relay.endpoint}${path}`, { headers: { ...signed, ...tamper } });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    const ok = await get(relay.key);
    expect(ok.status).toBe(206);
    expect(ok.body.length).toBe(16);
    expect((await get(null)).status).toBe(403);
    expect((await get({ accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey })).status).toBe(403);
    expect((await get({ ...relay.key, secretAccessKey: 'not-the-secret' })).status).toBe(403);
    expect((await get(relay.key, dataFile, { range: 'bytes=0-1048575' })).status).toBe(403);
    const otherBucket = dataFile.replace(`/${rgw.bucket}/`, '/another-bucket/');
    expect((await get(relay.key, otherBucket)).status).toBe(403);
  });
});
