/**
 * LanceDB on S3 (a real Ceph RADOS Gateway): the chunk index written and read through ChunkIndex, two connections
 * standing for two replicas (each its own LanceDB connection and view), coordinated by one Locks and one Events as
 * replicas are through PostgreSQL. Vectors are synthetic: this tests the store, not a model.
 */
import * as lancedb from '@lancedb/lancedb';
import { describe, expect, it } from 'vitest';
import { type Events, LocalEvents, LocalLocks, type Locks } from '../../src/store/coordination.js';
import { INDEX_FORMAT, readIndexInfo } from '../../src/store/lancedb/chunk-index-info.js';
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { upkeepLockKey } from '../../src/store/lancedb/owned-table.js';
import { parseS3Location } from '../../src/store/objects/location.js';
import { S3ObjectStore } from '../../src/store/objects/s3.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { rgwUnavailable } from '../helpers/rgw.js';
import { type ReplicaOptions, rgwReplicas } from '../helpers/rgw-replicas.js';
import { logS3Requests } from '../helpers/s3-request-log.js';

const SKIP = rgwUnavailable();
const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: 4 };
const HOUR = 3600_000;

function unit(...v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
}

function row(user: string, doc: string, i: number, text: string, vector = unit(1, i + 1, 0, 0)): ChunkRow {
  return { id: `${doc}:${i}`, user_id: user, project_id: `p-${user}`, document_id: doc, chunk_index: i, text, search_text: text, heading: null, page_start: null, page_end: null, vector };
}

describe.skipIf(SKIP !== null)(`LanceDB on S3 (Ceph RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const suite = rgwReplicas({ embedderId: EMBEDDER.id });
  const library = () => suite.library();

  /** One replica's view of a library, coordinated with the others by `locks` and `events`. */
  const replica = (url: string, shared: ReplicaOptions & { locks: Locks; events: Events }, endpoint?: string) => suite.replica(url, { ...shared, ...(endpoint ? { endpoint } : {}) });

  /** The table as LanceDB itself sees it, for what ChunkIndex does not expose (versions, index stats). */
  async function rawTable(url: string): Promise<lancedb.Table> {
    const conn = await lancedb.connect(`${url}/lancedb`, { storageOptions: suite.rgw.storageOptions() });
    const info = JSON.parse((await (await S3ObjectStore.connect(parseS3Location(url, suite.rgw.env()))).at('lancedb').get('chunks-index.json'))!.toString());
    return conn.openTable(info.table);
  }

  it('writes, reads, searches and deletes chunks, and keeps the index info next to the tables', async () => {
    const url = library();
    const { index, root } = await replica(url, { locks: new LocalLocks(), events: new LocalEvents() });
    await index.add([row('u1', 'd1', 0, 'penguins swim in cold water', unit(1, 0, 0, 0)), row('u1', 'd1', 1, 'penguins nest on ice', unit(0.9, 0.1, 0, 0))], EMBEDDER);
    await index.add([row('u2', 'd2', 0, 'penguins of another tenant', unit(1, 0, 0, 0))], EMBEDDER);
    expect(await index.count()).toBe(3);
    expect((await index.documentChunks('d1')).map((c) => c.text)).toEqual(['penguins swim in cold water', 'penguins nest on ice']);
    const kw = await index.keywordSearch({ projectIds: ['p-u1'], query: 'penguins', limit: 10 });
    expect(kw.map((h) => h.id).sort()).toEqual(['d1:0', 'd1:1']);
    const vec = await index.vectorSearch({ projectIds: ['p-u1'], vector: unit(1, 0, 0, 0), limit: 1 });
    expect(vec.map((h) => h.id)).toEqual(['d1:0']);
    expect((await index.getMany(['p-u1'], vec)).map((c) => c.id)).toEqual(['d1:0']);
    await index.optimize();
    expect((await index.keywordSearch({ projectIds: ['p-u2'], query: 'penguins', limit: 10 })).map((h) => h.id)).toEqual(['d2:0']);
    await index.deleteDocument('d1');
    expect(await index.count()).toBe(1);
    expect(await index.keywordSearch({ projectIds: ['p-u1'], query: 'penguins', limit: 10 })).toEqual([]);
    expect(JSON.parse((await root.at('lancedb').get('chunks-index.json'))!.toString())).toEqual({ table: 'chunks', embedderId: EMBEDDER.id, dimension: 4, format: INDEX_FORMAT });
  });

  /** Replica a writes the first row of a new library; b opens it after, looking for others' commits every `readConsistencyS`. */
  async function writerAndReader(readConsistencyS: number) {
    const url = library();
    const coordination = { locks: new LocalLocks(), events: new LocalEvents() };
    const a = await replica(url, coordination);
    await a.index.add([row('u1', 'd0', 0, 'first')], EMBEDDER);
    const b = await replica(url, { ...coordination, readConsistencyS });
    expect(await b.index.count()).toBe(1);
    return { url, a, b };
  }

  it("replicas opening an older release's table at once add its new columns once, and each opens it", async () => {
    // Found in a CI run: both replicas of the upgrade test read the schema of the handle each had opened before the
    // other's upgrade, so the second added `placement` again, and LanceDB refused ("already exists"): it did not start.
    const url = library();
    const coordination = { locks: new LocalLocks(), events: new LocalEvents(), funnelCommits: true };
    const first = await replica(url, coordination);
    await first.index.add([row('u1', 'd1', 0, 'penguins swim in cold water', unit(1, 0, 0, 0))], EMBEDDER);
    await suite.close(first);
    const older = await rawTable(url);
    await older.dropColumns(['placement', 'units']);
    older.close();
    const both = await Promise.all([replica(url, coordination), replica(url, coordination)]);
    for (const { index } of both) expect(await index.count()).toBe(1);
    const upgraded = await rawTable(url);
    expect((await upgraded.schema()).fields.map((f) => f.name)).toEqual(expect.arrayContaining(['placement', 'units']));
    upgraded.close();
  });

  it("lets a replica see another's new rows once the consistency interval has passed, with no event", async () => {
    const { a, b } = await writerAndReader(1);
    await a.index.add([row('u1', 'd2', 0, 'second')], EMBEDDER);
    await sleep(1100);
    expect(await b.index.count()).toBe(2);
    expect((await b.index.keywordSearch({ projectIds: ['p-u1'], query: 'second', limit: 5 })).map((h) => h.id)).toEqual(['d2:0']);
  });

  it("deletes and moves a document's rows another replica appended after this one last looked", async () => {
    // b looks for other replicas' commits once an hour and nothing tells it of a's writes: it still sees one row when it acts.
    const { url, a, b } = await writerAndReader(3600);
    await a.index.add([row('u1', 'd1', 0, 'one'), row('u1', 'd1', 1, 'one more')], EMBEDDER);
    await a.index.add([row('u1', 'd2', 0, 'two')], EMBEDDER);
    await b.index.deleteDocument('d1');
    await b.index.moveDocument('d2', 'p-elsewhere');
    const table = await rawTable(url);
    expect(await table.countRows("document_id = 'd1'")).toBe(0);
    expect((await table.query().where("document_id = 'd2'").select(['project_id']).toArray()).map((r) => r.project_id)).toEqual(['p-elsewhere']);
  });

  it('refreshes a replica at once when a document settles elsewhere, long before its consistency interval', async () => {
    const url = library();
    const events = new LocalEvents();
    const locks = new LocalLocks();
    const a = await replica(url, { locks, events });
    await a.index.add([row('u1', 'd1', 0, 'first')], EMBEDDER);
    // An hour between checks: only the event can make b see the new rows.
    const b = await replica(url, { locks, events, readConsistencyS: 3600 });
    expect(await b.index.count()).toBe(1);
    await a.index.add([row('u1', 'd2', 0, 'second')], EMBEDDER);
    expect(await b.index.count()).toBe(1);
    await events.publish('document_settled', 'd2');
    expect(await eventually(async () => (await b.index.count()) === 2, 3000)).toBe(true);
  });

  it('coalesces a burst of settle events into a few refreshes, and still sees the last write', async () => {
    const url = library();
    const events = new LocalEvents();
    const locks = new LocalLocks();
    const a = await replica(url, { locks, events });
    await a.index.add([row('u1', 'd0', 0, 'zero')], EMBEDDER);
    const requests = await logS3Requests(suite.rgw.endpoint);
    try {
      const b = await replica(url, { locks, events, readConsistencyS: 3600 }, requests.endpoint);
      expect(await b.index.count()).toBe(1);
      await a.index.add([row('u1', 'd1', 0, 'one')], EMBEDDER);
      requests.reset();
      // Replicas settling documents several times a second: 40 events in about a second.
      const t0 = Date.now();
      for (let i = 0; i < 40; i++) {
        await events.publish('document_settled', `d${i}`);
        await sleep(25);
      }
      const burstMs = Date.now() - t0;
      expect(await eventually(async () => (await b.index.count()) === 2, 3000)).toBe(true);
      const lists = requests.requests().filter((r) => r.method === 'GET' && /list-type|delimiter/.test(r.query)).length;
      // One refresh per 400 ms at most (each lists the versions), not one per event.
      expect(lists).toBeGreaterThan(0);
      expect(lists).toBeLessThanOrEqual(2 * (Math.ceil(burstMs / 400) + 2));
    } finally {
      await requests.close();
    }
  });

  it('picks up the table another replica created after this one opened, on index_changed', async () => {
    const url = library();
    const events = new LocalEvents();
    const locks = new LocalLocks();
    const b = await replica(url, { locks, events, readConsistencyS: 3600 });
    expect(b.index.indexInfo()).toBeNull();
    const a = await replica(url, { locks, events });
    await a.index.add([row('u1', 'd1', 0, 'made by a')], EMBEDDER); // creates the table and announces it
    for (let i = 0; i < 50 && !b.index.indexInfo(); i++) await sleep(100);
    expect(b.index.indexInfo()).toEqual({ table: 'chunks', embedderId: EMBEDDER.id, dimension: 4 });
    await events.publish('document_settled', 'd1'); // as the daemon does once the document is ready
    await b.index.refresh();
    expect((await b.index.keywordSearch({ projectIds: ['p-u1'], query: 'made', limit: 5 })).map((h) => h.id)).toEqual(['d1:0']);
  });

  it.each([false, true])('keeps every row when two replicas write the same table at once, first writes included (funnelled: %s)', async (funnelCommits) => {
    const url = library();
    const locks = new LocalLocks();
    const events = new LocalEvents();
    const a = await replica(url, { locks, events, readConsistencyS: 0, funnelCommits });
    const b = await replica(url, { locks, events, readConsistencyS: 0, funnelCommits });
    const writes = (r: typeof a, name: string) =>
      (async () => {
        for (let i = 0; i < 8; i++) await r.index.add([row('u1', `${name}${i}`, 0, `${name} ${i}`), row('u1', `${name}${i}`, 1, `${name} ${i} more`)], EMBEDDER);
      })();
    await Promise.all([writes(a, 'a'), writes(b, 'b')]);
    expect(await a.index.count()).toBe(32);
    expect(await b.index.count()).toBe(32);
    await Promise.all([a.index.deleteDocument('a0'), b.index.deleteDocument('b0')]);
    expect(await a.index.count()).toBe(28);
  });

  /** Two replicas of a new library, `a` the upkeep leader, sharing one Locks (also returned) and one Events. */
  async function leaderAndOther() {
    const url = library();
    const locks = new LocalLocks();
    const events = new LocalEvents();
    const a = await replica(url, { locks, events, readConsistencyS: 0, upkeepRetryMs: 100 });
    const b = await replica(url, { locks, events, readConsistencyS: 0, upkeepRetryMs: 100 });
    expect(a.store.shared!.upkeep.isLeader()).toBe(true);
    expect(b.store.shared!.upkeep.isLeader()).toBe(false);
    return { url, locks, a, b };
  }

  it('optimizes and prunes on exactly one replica, the lease holder; another takes over when it lets go', async () => {
    const { url, a, b } = await leaderAndOther();
    await a.index.add([row('u1', 'd1', 0, 'one')], EMBEDDER);
    await b.index.add([row('u1', 'd2', 0, 'two')], EMBEDDER);
    const raw = await rawTable(url);
    const unindexed = async () => {
      await raw.checkoutLatest();
      return (await raw.indexStats('search_text_idx'))!.numUnindexedRows;
    };
    expect(await unindexed()).toBe(2);
    await b.index.optimize(); // not the leader: nothing happens
    expect(await unindexed()).toBe(2);
    await a.index.optimize();
    expect(await unindexed()).toBe(0);

    await b.index.add([row('u1', 'd3', 0, 'three')], EMBEDDER);
    await a.close(); // lets go of the lease
    for (let i = 0; i < 50 && !b.store.shared!.upkeep.isLeader(); i++) await sleep(50);
    expect(b.store.shared!.upkeep.isLeader()).toBe(true);
    await b.index.optimize();
    expect(await unindexed()).toBe(0);
  });

  it('drops the table a re-index replaced only once the upkeep pass in progress on it ends', async () => {
    const { locks, a, b } = await leaderAndOther();
    await a.index.add([row('u1', 'd1', 0, 'one'), row('u1', 'd2', 0, 'two')], EMBEDDER);
    const chunkTables = async () => (await a.store.connection.tableNames()).filter((t) => /^chunks(_|$)/.test(t)).sort();
    expect(await chunkTables()).toEqual(['chunks']);
    // The leader's pass on the old table is under way (it holds the upkeep lock) while replica b re-indexes.
    let endPass!: () => void;
    const passing = locks.withLock(upkeepLockKey('chunks'), () => new Promise<void>((r) => (endPass = r)));
    let rebuilt = false;
    const rebuild = b.index.rebuild({ id: 'test:other', dimension: 3, embed: async (rows) => rows.map(() => ({ vector: Float32Array.from([0, 0, 1]), units: null })) }, () => undefined).then((r) => {
      rebuilt = true;
      return r;
    });
    expect(await eventually(async () => (await readIndexInfo(b.store))?.table !== 'chunks', 30_000)).toBe(true);
    await sleep(500);
    expect(rebuilt).toBe(false); // switched, but the drop waits for the pass
    expect(await chunkTables()).toHaveLength(2);
    endPass();
    await passing;
    expect(await rebuild).toEqual({ chunks: 2 });
    expect(await chunkTables()).toEqual([expect.stringMatching(/^chunks_/)]);
  });

  it('keeps superseded versions through an optimize for a reader still on one: retention in hours, not a minute', async () => {
    // A pinned reader (a long search, or a replica that has not refreshed yet) against the upkeep leader's prune.
    const pinnedReaderAfterPrune = async (keepSupersededMs: number) => {
      const url = library();
      const { index } = await replica(url, { locks: new LocalLocks(), events: new LocalEvents(), keepSupersededMs });
      await index.add([row('u1', 'd1', 0, 'one')], EMBEDDER);
      await index.add([row('u1', 'd2', 0, 'two')], EMBEDDER);
      const reader = await rawTable(url);
      await reader.checkout(await reader.version());
      await index.deleteDocument('d1');
      await index.add([row('u1', 'd3', 0, 'three')], EMBEDDER);
      await sleep(2500);
      await index.optimize();
      return reader
        .query()
        .select(['id'])
        .toArray()
        .then((rows) => rows.map((r) => r.id as string).sort(), (err: Error) => err.message);
    };
    expect(await pinnedReaderAfterPrune(HOUR)).toEqual(['d1:0', 'd2:0']);
    // The same with a retention shorter than the reader's age: its files are gone (what the hours protect against).
    expect(await pinnedReaderAfterPrune(200)).toEqual(expect.stringMatching(/not found|No such|does not exist/i));
  });

  it('runs an upkeep pass only after a write, reads no version list of its own, and never holds a write behind it', async () => {
    const log = await logS3Requests(suite.rgw.endpoint);
    try {
      const url = library();
      const leader = await replica(url, { locks: new LocalLocks(), events: new LocalEvents() }, log.endpoint);
      const { index } = leader;
      for (let i = 0; i < 30; i++) await index.add([row('u1', `d${i}`, 0, `doc ${i}`)], EMBEDDER);
      await index.optimize();
      const raw = await rawTable(url); // through the gateway itself: not counted
      const versions = async () => {
        await raw.checkoutLatest();
        return (await raw.listVersions()).length;
      };
      const manifestReads = () => log.requests().filter((r) => r.method === 'GET' && /\/_versions\/[^/]+\.manifest$/.test(r.path)).length;

      // Nothing written since the last pass: the next one sees that and does nothing more.
      const before = await versions();
      log.reset();
      await index.optimize();
      expect(log.requests().length).toBeLessThanOrEqual(4);
      expect(await versions()).toBe(before);

      // After a write the pass compacts and indexes it. Retention is an hour, so nothing can be pruned: no listing
      // of every version and no second cleanup on top of what LanceDB's own optimize reads (each manifest twice:
      // its Node API has no optimize without its 7-day cleanup).
      await index.add([row('u1', 'e0', 0, 'one more')], EMBEDDER);
      const written = await versions();
      log.reset();
      await index.optimize();
      console.log(`upkeep pass over ${written} versions: ${manifestReads()} manifest reads, ${log.requests().length} requests`);
      expect(manifestReads()).toBeLessThanOrEqual(2 * written + 5);

      // A write on the leader does not queue behind upkeep in progress.
      await index.add([row('u1', 'e1', 0, 'to fold in')], EMBEDDER);
      const done: string[] = [];
      const upkeep = index.optimize().then(() => done.push('upkeep'));
      await index.add([row('u1', 'e2', 0, 'written meanwhile')], EMBEDDER).then(() => done.push('write'));
      await upkeep;
      expect(done).toEqual(['write', 'upkeep']);
      expect(await index.count()).toBe(33);
      await suite.close(leader); // before the request log goes
    } finally {
      await log.close();
    }
  }, 120_000);
});
