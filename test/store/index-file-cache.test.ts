/**
 * A replica's disk cache of the index's immutable files (src/store/lancedb/index-cache-relay.ts), on a real Ceph
 * RADOS Gateway: LanceDB reads through it, and a request log between the cache and the gateway shows what still
 * reaches the store. Vectors are synthetic: this tests the store, not a model.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { s3Signer } from '../../src/store/objects/sigv4.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { rgwUnavailable } from '../helpers/rgw.js';
import { rgwReplicas } from '../helpers/rgw-replicas.js';
import { EMBEDDER, rows, search } from '../helpers/synthetic-chunks.js';

const SKIP = rgwUnavailable();
const MiB = 1024 * 1024;
/** Files a Lance table writes once and never changes: what the cache may answer for. */
const IMMUTABLE = /\.lance\/(data|_indices|_deletions|_transactions)\//;

describe.skipIf(SKIP !== null)(`the index file cache on S3 (Ceph RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const suite = rgwReplicas({ log: true, asReplica: true, embedderId: EMBEDDER.id });
  const library = () => suite.library();

  /** A replica's index on the library: with a file cache (its directory and size), its store requests logged. */
  const replica = (url: string, fileCache?: { dir: string; maxBytes: number }, readConsistencyS = 0) => suite.replica(url, { readConsistencyS, ...(fileCache ? { fileCache } : {}) });

  const dataRequests = () => suite.log.requests().filter((r) => IMMUTABLE.test(r.path));
  /** Listings of a table's versions: how LanceDB checks for a newer one. */
  const versionLists = () => suite.log.requests().filter((r) => r.method === 'GET' && r.query.includes('list-type') && r.query.includes('_versions'));

  async function fill(url: string, count = 600) {
    const writer = await replica(url);
    // One commit: optimize compacts the rows into one fragment and indexes them all the same, and each commit more
    // on the gateway cost the suite half a second.
    await writer.index.add(rows('d1', count), EMBEDDER);
    await writer.index.optimize();
    return writer;
  }

  it('answers the same as the store, and a repeated search reads no data, index or deletion file from the store', async () => {
    const url = library();
    const writer = await fill(url);
    const cached = await replica(url, { dir: join(suite.dir, 'a'), maxBytes: 256 * MiB });
    for (const seed of [3, 250, 599]) {
      const direct = await search(writer.index, seed);
      const first = await search(cached.index, seed);
      expect(first).toEqual(direct);
      expect(first.shown.length).toBeGreaterThan(5);
      suite.log.reset();
      expect(await search(cached.index, seed)).toEqual(direct);
      expect(dataRequests()).toEqual([]);
    }
    expect(cached.store.relay!.stats.hits).toBeGreaterThan(0);
  });

  it("sees another replica's deletions and new rows: what changed is read from the store, the rest from disk", async () => {
    const url = library();
    const writer = await fill(url);
    const cached = await replica(url, { dir: join(suite.dir, 'b'), maxBytes: 256 * MiB });
    expect((await search(cached.index, 10)).shown.map(([id]) => id)).toContain('d1:10');
    await writer.index.deleteDocument('d1');
    await writer.index.add(rows('d2', 50), EMBEDDER);
    suite.log.reset();
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
    const cached = await replica(url, { dir: join(suite.dir, 'own'), maxBytes: 256 * MiB }, 3600);
    expect((await cached.index.keywordSearch({ projectIds: ['p'], query: 'item999', limit: 5 })).length).toBe(0);
    const relayed = cached.store.relay!.stats.requests;
    await cached.index.add(rows('d9', 1, 999), EMBEDDER);
    await cached.index.deleteDocument('d1');
    expect(cached.store.relay!.stats.requests).toBe(relayed);
    suite.log.reset();
    expect((await cached.index.keywordSearch({ projectIds: ['p'], query: 'item999', limit: 5 })).map((h) => h.id)).toEqual(['d9:999']);
    expect((await search(cached.index, 5)).shown.every(([id]) => String(id).startsWith('d9:'))).toBe(true);
    expect(cached.store.relay!.stats.requests).toBeGreaterThan(relayed);
    // It caught up with its own commits by their version numbers: no listing of the versions.
    expect(versionLists()).toEqual([]);
  });

  it("checks for other replicas' commits, with no event, in the background of a search past the interval", async () => {
    const url = library();
    const writer = await fill(url, 200);
    // 5 s between checks: the writer's commit and the first search after it must fall within one interval, and on a
    // loaded 2-core machine that commit alone took more than a second (an interval of 1 s failed there).
    const cached = await replica(url, { dir: join(suite.dir, 'recheck'), maxBytes: 256 * MiB }, 5);
    const found = async () => (await cached.index.keywordSearch({ projectIds: ['p'], query: 'item777', limit: 5 })).map((h) => h.id);
    expect(await found()).toEqual([]);
    await writer.index.add(rows('d7', 1, 777), EMBEDDER);
    suite.log.reset();
    // Within the interval: the view it has, and no request about versions.
    expect(await found()).toEqual([]);
    expect(versionLists()).toEqual([]);
    await sleep(5100);
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
    const small = join(suite.dir, 'c');
    const limit = 3 * MiB;
    let cached = await replica(url, { dir: small, maxBytes: limit });
    for (const seed of [1, 700, 1400]) expect(await search(cached.index, seed)).toEqual(await search(writer.index, seed));
    const onDisk = () => readdirSync(small, { recursive: true, withFileTypes: true }).reduce((sum, e) => sum + (e.isFile() ? statSync(join(e.parentPath, e.name)).size : 0), 0);
    expect(onDisk()).toBeGreaterThan(0);
    expect(onDisk()).toBeLessThanOrEqual(limit);

    const big = join(suite.dir, 'd');
    cached = await replica(url, { dir: big, maxBytes: 256 * MiB });
    await search(cached.index, 42);
    await suite.close(cached);
    const again = await replica(url, { dir: big, maxBytes: 256 * MiB });
    const direct = await search(writer.index, 42);
    suite.log.reset();
    expect(await search(again.index, 42)).toEqual(direct);
    expect(dataRequests()).toEqual([]);
  });

  it('refuses a request not signed with its own key, even one signed with the store\'s key', async () => {
    const url = library();
    await fill(url, 100);
    const cached = await replica(url, { dir: join(suite.dir, 'e'), maxBytes: 256 * MiB });
    await search(cached.index, 1);
    const relay = cached.store.relay!;
    const endpoint = new URL(relay.endpoint);
    const dataFile = suite.log.requests().find((r) => /\/data\/.*\.lance$/.test(r.path))!.path;
    expect(dataFile).toBeTruthy();
    const get = async (key: { accessKeyId: string; secretAccessKey: string } | null, path = dataFile, tamper?: Record<string, string>) => {
      const headers: Record<string, string> = { host: endpoint.host, range: 'bytes=0-15', 'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' };
      const signed = key ? (await s3Signer(key, suite.rgw.region).sign({ method: 'GET', protocol: 'http:', hostname: endpoint.host, path, query: {}, headers })).headers : headers;
      const res = await fetch(`${relay.endpoint}${path}`, { headers: { ...signed, ...tamper } });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    const ok = await get(relay.key);
    expect(ok.status).toBe(206);
    expect(ok.body.length).toBe(16);
    expect((await get(null)).status).toBe(403);
    expect((await get({ accessKeyId: suite.rgw.accessKeyId, secretAccessKey: suite.rgw.secretAccessKey })).status).toBe(403);
    expect((await get({ ...relay.key, secretAccessKey: 'not-the-secret' })).status).toBe(403);
    expect((await get(relay.key, dataFile, { range: 'bytes=0-1048575' })).status).toBe(403);
    const otherBucket = dataFile.replace(`/${suite.rgw.bucket}/`, '/another-bucket/');
    expect((await get(relay.key, otherBucket)).status).toBe(403);
  });
});
