/**
 * A replica's copy of the tables on object storage (src/store/lancedb/table-mirror.ts), on a real Ceph RADOS
 * Gateway: searches read a local LanceDB dataset, and a request log between the replica and the gateway shows
 * what still reaches the store. Vectors are synthetic: this tests the store, not a model.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { manifestVersion, TableMirror } from '../../src/store/lancedb/table-mirror.js';
import { parseS3Location } from '../../src/store/objects/location.js';
import { S3ObjectStore } from '../../src/store/objects/s3.js';
import { eventually } from '../helpers/eventually.js';
import { fillDisk, mountTmpfs, unmount } from '../helpers/fill-disk.js';
import { rgwUnavailable } from '../helpers/rgw.js';
import { rgwReplicas } from '../helpers/rgw-replicas.js';
import { logS3Requests } from '../helpers/s3-request-log.js';
import { EMBEDDER, rows, search } from '../helpers/synthetic-chunks.js';

const SKIP = rgwUnavailable();
const MiB = 1024 * 1024;

describe('manifest names', () => {
  it('reads both of Lance\'s naming schemes', () => {
    expect(manifestVersion('18446744073709551614.manifest')).toBe(1n);
    expect(manifestVersion('18446744073709551609.manifest')).toBe(6n);
    expect(manifestVersion('12.manifest')).toBe(12n);
    expect(manifestVersion('latest_version_hint.json')).toBeNull();
    expect(manifestVersion('18446744073709551614.manifest.part-0a1b2c3d')).toBeNull();
  });
});

/** A small disk of its own for the copy, to fill. */
const tmpfs = mkdtempSync(join(tmpdir(), 'docsearch-mirror-disk-'));
const NO_TMPFS = SKIP ?? mountTmpfs(tmpfs, 16);
afterAll(() => {
  if (NO_TMPFS === null) unmount(tmpfs);
  rmSync(tmpfs, { recursive: true, force: true });
});

describe.skipIf(SKIP !== null)(`a replica's copy of the tables on S3 (Ceph RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const suite = rgwReplicas({ log: true, asReplica: true, embedderId: EMBEDDER.id });
  const library = () => suite.library();

  interface Options {
    /** The copy's directory, and the block cache's beside it. */
    cache?: { dir: string; maxBytes: number };
    readConsistencyS?: number;
    keepSupersededMs?: number;
    endpoint?: string;
  }

  const replica = (url: string, { cache, ...opts }: Options = {}) =>
    suite.replica(url, { ...opts, ...(cache ? { fileCache: { dir: join(cache.dir, 'blocks'), mirrorDir: join(cache.dir, 'tables'), maxBytes: cache.maxBytes } } : {}) });

  async function fill(url: string, count = 600, opts: Options = {}) {
    const writer = await replica(url, opts);
    for (let i = 0; i < count; i += 100) await writer.index.add(rows('d1', 100, i), EMBEDDER);
    await writer.index.optimize();
    return writer;
  }

  /** Keys of the table's data, deletion and index files, in the store or in a copy. */
  async function storedFiles(root: S3ObjectStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const key of root.list('lancedb/')) if (/\.lance\/(data|_deletions|_indices)\//.test(key)) keys.push(key.slice('lancedb/'.length));
    return keys.sort();
  }
  function copiedFiles(tables: string): string[] {
    return readdirSync(tables, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.lance\/(data|_deletions|_indices)\//.test(join(e.parentPath, e.name)))
      .map((e) => join(e.parentPath, e.name).slice(tables.length + 1))
      .sort();
  }

  it('copies a table that fits and searches the copy: the same answers as the store, and no request to it when settled', async () => {
    const url = library();
    const writer = await fill(url);
    const cache = { dir: join(suite.dir, 'a'), maxBytes: 256 * MiB };
    const copy = await replica(url, { cache, readConsistencyS: 3600 });
    expect(copy.store.mirror).toBeDefined();
    expect(copy.store.relay).toBeUndefined();
    for (const seed of [3, 250, 599]) {
      const direct = await search(writer.index, seed);
      const first = await search(copy.index, seed);
      expect(first).toEqual(direct);
      expect(first.shown.length).toBeGreaterThan(5);
      suite.log.reset();
      expect(await search(copy.index, seed)).toEqual(direct);
      expect(suite.log.requests()).toEqual([]);
    }
    expect(copiedFiles(join(cache.dir, 'tables'))).toEqual(await storedFiles(writer.root));
  });

  it("follows another replica's deletions and new rows: fetches only what is new, and drops what the store pruned", async () => {
    const url = library();
    // Superseded versions pruned at once, so that the store drops files within the test.
    const writer = await fill(url, 600, { keepSupersededMs: 0 });
    const cache = { dir: join(suite.dir, 'b'), maxBytes: 256 * MiB };
    const copy = await replica(url, { cache, readConsistencyS: 3600 });
    expect((await search(copy.index, 10)).shown.map(([id]) => id)).toContain('d1:10');
    const before = copy.store.mirror!.stats.files;
    await writer.index.deleteDocument('d1');
    await writer.index.add(rows('d2', 50), EMBEDDER);
    // What a `document_settled` event from the writer's replica starts.
    await copy.index.refresh();
    const after = await search(copy.index, 10);
    expect(after).toEqual(await search(writer.index, 10));
    expect(after.shown.map(([id]) => id)).toContain('d2:10');
    expect(after.shown.every(([id]) => String(id).startsWith('d2:'))).toBe(true);
    const fetched = copy.store.mirror!.stats.files - before;
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThan(before);

    // Compacted and pruned by the writer: the copy follows, keeping nothing the store no longer has.
    await writer.index.optimize();
    await copy.index.refresh();
    expect(await search(copy.index, 20)).toEqual(await search(writer.index, 20));
    expect(copiedFiles(join(cache.dir, 'tables'))).toEqual(await storedFiles(writer.root));
    expect(copy.store.mirror!.stats.removed).toBeGreaterThan(0);
  });

  it("on another replica's commit asks the store nothing until a search needs the new version", async () => {
    const url = library();
    const writer = await fill(url, 200);
    const own = await logS3Requests(suite.rgw.endpoint);
    try {
      const copy = await replica(url, { cache: { dir: join(suite.dir, 'lazy'), maxBytes: 256 * MiB }, readConsistencyS: 3600, endpoint: own.endpoint });
      const found = async () => (await copy.index.keywordSearch({ projectIds: ['p'], query: 'item666', limit: 5 })).map((h) => h.id);
      expect(await found()).toEqual([]);
      await writer.index.add(rows('d6', 1, 666), EMBEDDER);
      own.reset();
      // What a `document_settled` event starts: the main handle, which writes use, re-checks by itself.
      await copy.index.refresh();
      expect(own.requests()).toEqual([]);
      expect(await found()).toEqual(['d6:666']);
      expect(own.requests().length).toBeGreaterThan(0);
      await suite.close(copy);
    } finally {
      await own.close();
    }
  });

  it("shows the replica's own commits to its next search, without waiting for a check", async () => {
    const url = library();
    await fill(url, 200);
    // An hour between checks: only catching up after its own commit can show the new rows.
    const copy = await replica(url, { cache: { dir: join(suite.dir, 'own'), maxBytes: 256 * MiB }, readConsistencyS: 3600 });
    expect((await copy.index.keywordSearch({ projectIds: ['p'], query: 'item999', limit: 5 })).length).toBe(0);
    await copy.index.add(rows('d9', 1, 999), EMBEDDER);
    await copy.index.deleteDocument('d1');
    expect((await copy.index.keywordSearch({ projectIds: ['p'], query: 'item999', limit: 5 })).map((h) => h.id)).toEqual(['d9:999']);
    expect((await search(copy.index, 5)).shown.every(([id]) => String(id).startsWith('d9:'))).toBe(true);
  });

  it("checks for other replicas' commits with no event: past the interval in the background, or on every read at 0 s", async () => {
    const url = library();
    const writer = await fill(url, 200);
    const copy = await replica(url, { cache: { dir: join(suite.dir, 'recheck'), maxBytes: 256 * MiB }, readConsistencyS: 1 });
    const strict = await replica(url, { cache: { dir: join(suite.dir, 'strict'), maxBytes: 256 * MiB }, readConsistencyS: 0 });
    const found = async (index: ChunkIndex) => (await index.keywordSearch({ projectIds: ['p'], query: 'item777', limit: 5 })).map((h) => h.id);
    expect(await found(copy.index)).toEqual([]);
    expect(await found(strict.index)).toEqual([]);
    await writer.index.add(rows('d7', 1, 777), EMBEDDER);
    expect(await found(strict.index)).toEqual(['d7:777']);
    expect(await eventually(async () => (await found(copy.index)).length === 1, 5000)).toBe(true);
  });

  it('reads a table larger than its size through the block cache, and each way removes what the other left', async () => {
    const url = library();
    await fill(url, 300);
    const cache = { dir: join(suite.dir, 'c'), maxBytes: 256 * MiB };
    const copy = await replica(url, { cache });
    await search(copy.index, 1);
    await suite.close(copy);
    expect(existsSync(join(cache.dir, 'tables'))).toBe(true);

    const small = await replica(url, { cache: { ...cache, maxBytes: 64 * 1024 } });
    expect(small.store.mirror).toBeUndefined();
    expect(small.store.relay).toBeDefined();
    expect(existsSync(join(cache.dir, 'tables'))).toBe(false);
    await search(small.index, 1);
    await suite.close(small);
    expect(readdirSync(join(cache.dir, 'blocks')).length).toBeGreaterThan(0);

    const again = await replica(url, { cache });
    expect(again.store.mirror).toBeDefined();
    expect(existsSync(join(cache.dir, 'blocks'))).toBe(false);
  });

  it("copies a table whose manifests are named Lance's older way (ascending), newest version included", async () => {
    const url = library();
    const loc = parseS3Location(url, suite.rgw.env());
    const root = await S3ObjectStore.connect(loc);
    const db = await lancedb.connect(`${url}/lancedb`, { storageOptions: suite.rgw.storageOptions() });
    try {
      const table = await db.createTable('old', [{ id: 1, text: 'one' }], { storageOptions: { new_table_enable_v2_manifest_paths: 'false' } });
      for (let i = 2; i <= 11; i++) await table.add([{ id: i, text: `row ${i}` }]);
      table.close();
      const names = [];
      for await (const key of root.list('lancedb/old.lance/_versions/')) names.push(key.split('/').at(-1));
      expect(names).toContain('11.manifest');
      const mirror = await TableMirror.open(join(suite.dir, 'v1'), root.at('lancedb'), 256 * MiB);
      await mirror.sync('old');
      const local = await lancedb.connect(join(suite.dir, 'v1'));
      const copy = await local.openTable('old');
      expect(await copy.version()).toBe(11);
      expect(await copy.countRows()).toBe(11);
      copy.close();
      local.close();
    } finally {
      db.close();
      root.close();
    }
  });

  it('removes the copy of a table the store no longer has (the table a re-index replaced)', async () => {
    const url = library();
    const root = await S3ObjectStore.connect(parseS3Location(url, suite.rgw.env()));
    const db = await lancedb.connect(`${url}/lancedb`, { storageOptions: suite.rgw.storageOptions() });
    try {
      const mirror = await TableMirror.open(join(suite.dir, 'gone'), root.at('lancedb'), 256 * MiB);
      await db.createTable('chunks', [{ id: 1 }]);
      await mirror.sync('chunks');
      const rebuilt = await db.createTable('chunks_new', [{ id: 1 }]);
      await mirror.sync('chunks_new');
      expect(readdirSync(join(suite.dir, 'gone')).sort()).toEqual(['chunks.lance', 'chunks_new.lance']);
      await db.dropTable('chunks');
      await rebuilt.add([{ id: 2 }]);
      await mirror.sync('chunks_new');
      expect(readdirSync(join(suite.dir, 'gone'))).toEqual(['chunks_new.lance']);
      rebuilt.close();
    } finally {
      db.close();
      root.close();
    }
  });

  it.skipIf(NO_TMPFS !== null)(`searches the store directly while its disk is full, and the copy again once there is room${NO_TMPFS ? ` (skipped: ${NO_TMPFS})` : ''}`, async () => {
    const url = library();
    const writer = await fill(url, 200);
    const copy = await replica(url, { cache: { dir: tmpfs, maxBytes: 256 * MiB }, readConsistencyS: 3600 });
    const found = async () => (await copy.index.keywordSearch({ projectIds: ['p'], query: 'item888', limit: 5 })).map((h) => h.id);
    expect(await found()).toEqual([]);
    const filler = join(tmpfs, 'filler');
    fillDisk(filler);
    await writer.index.add(rows('d8', 1, 888), EMBEDDER);
    await copy.index.refresh();
    const fetched = copy.store.mirror!.stats.files;
    expect(await found()).toEqual(['d8:888']);
    expect(copy.store.mirror!.stats.files).toBe(fetched);
    await rm(filler);
    expect(await found()).toEqual(['d8:888']);
    expect(copy.store.mirror!.stats.files).toBeGreaterThan(fetched);
    expect((await search(copy.index, 888)).shown.map(([id]) => id)).toContain('d8:888');
  });

  it('a restarted replica fetches only what changed, and a fetch cut short by a crash is removed, never read', async () => {
    const url = library();
    const writer = await fill(url, 300);
    const cache = { dir: join(suite.dir, 'd'), maxBytes: 256 * MiB };
    const first = await replica(url, { cache });
    const direct = await search(writer.index, 42);
    expect(await search(first.index, 42)).toEqual(direct);
    await suite.close(first);
    const tables = join(cache.dir, 'tables');
    const dataDir = join(tables, readdirSync(tables)[0]!, 'data');
    const partial = join(dataDir, `${readdirSync(dataDir)[0]}.part-deadbeef`);
    await mkdir(dataDir, { recursive: true });
    await writeFile(partial, 'half a file');

    await writer.index.add(rows('d3', 10, 3000), EMBEDDER);
    const again = await replica(url, { cache });
    expect(existsSync(partial)).toBe(false);
    expect((await again.index.keywordSearch({ projectIds: ['p'], query: 'item3005', limit: 5 })).map((h) => h.id)).toEqual(['d3:3005']);
    // What the writer added since (its data file, and what a background optimize wrote), and a manifest: far
    // fewer files than the copy holds.
    expect(again.store.mirror!.stats.files).toBeGreaterThan(0);
    expect(again.store.mirror!.stats.files).toBeLessThan(copiedFiles(tables).length / 2);
  });
});
