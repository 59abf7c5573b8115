/**
 * The chunk backfill (src/ingest/backfill.ts) over a real LanceDB chunks table: it fills the rows a deriver names as
 * pending, batch by batch, and they stay searchable; it resumes from the rows after a stop; it waits while the
 * process ingests; it leaves rows deleted or rewritten meanwhile alone; one holder of the lease runs it; a deriver
 * whose rows stay pending stops alone. The test deriver fills `placement`, a nullable column older tables lack.
 * The daemon's derivers (unit vectors, …) are tested through the daemon on the release fixtures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkBackfill, type ChunkDeriver } from '../../src/ingest/backfill.js';
import { LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { EMBEDDER, rows, search, vector } from '../helpers/synthetic-chunks.js';

const dirs: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const silent = { info: () => undefined, warn: () => undefined };

async function library(documents = 3, perDocument = 50): Promise<{ dir: string; index: ChunkIndex }> {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-backfill-'));
  dirs.push(dir);
  const store = await VectorStore.open(dir);
  const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
  open.push(store, index);
  // Written as an older release did: no placement.
  for (let d = 0; d < documents; d++) await index.add(rows(`doc${d}`, perDocument, d * perDocument).map((r) => ({ ...r, placement: null })), EMBEDDER);
  await index.optimize();
  return { dir, index };
}

/** Fills `placement` from the text's length; records every id it derived. */
function placements(seen: string[], opts: { batchRows?: number; before?: (rows: readonly Record<string, unknown>[]) => Promise<void> } = {}): ChunkDeriver & { completed: number } {
  return {
    name: 'placement',
    reads: ['text'],
    writes: ['placement'],
    batchRows: opts.batchRows ?? 40,
    completed: 0,
    pending: 'placement IS NULL',
    async derive(list) {
      await opts.before?.(list);
      seen.push(...list.map((r) => r.id as string));
      return list.map((r) => ({ placement: JSON.stringify({ overlap: 0, separator: '', page_starts: [], length: (r.text as string).length }) }));
    },
    async complete() {
      this.completed++;
    },
  };
}

const until = async (check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
  expect(await check()).toBe(true);
};

describe('chunk backfill', () => {
  it('fills every pending row once, in batches, and the rows are still found by both searches', async () => {
    const { index } = await library();
    const seen: string[] = [];
    const deriver = placements(seen);
    const backfill = new ChunkBackfill({ chunks: index, derivers: [deriver], log: silent });
    const before = await search(index, 77);
    backfill.start();
    await until(() => backfill.status().state === 'done');
    await backfill.stop();
    expect(await index.countWhere('placement IS NULL')).toBe(0);
    expect(seen.length).toBe(150);
    expect(new Set(seen).size).toBe(150);
    expect(backfill.status().derivers.placement).toMatchObject({ pending: 0, done: 150, state: 'done' });
    expect(deriver.completed).toBe(1);
    const row = (await index.documentChunks('doc1'))[3]!;
    expect(JSON.parse(row.placement!)).toMatchObject({ length: row.text.length });
    // Rewritten rows are scanned until the next optimize, then indexed: found throughout (BM25's statistics, and so
    // the order of ties, move a little while rows are outside the full-text index, as after any write).
    const same = async () => {
      const now = await search(index, 77);
      expect(now.vec).toEqual(before.vec);
      expect(now.kw[0]).toEqual(['doc1:77', expect.closeTo(before.kw[0]![1] as number, 1)]);
      expect(new Set(now.kw.map(([id]) => id))).toEqual(new Set(before.kw.map(([id]) => id)));
    };
    await same();
    await index.optimize();
    await same();
    const [top] = await index.vectorSearch({ projectIds: ['p'], vector: vector(120), limit: 1 });
    expect(top!.id).toBe('doc2:120');
  });

  it('resumes from the rows after a stop: a new runner derives only what the first left', async () => {
    const { index } = await library();
    const seen: string[] = [];
    let batches = 0;
    let first!: ChunkBackfill;
    const stopped = new Promise<void>((resolve) => {
      first = new ChunkBackfill({
        chunks: index,
        derivers: [
          placements(seen, {
            before: async () => {
              if (++batches === 2) void first.stop().then(resolve);
            },
          }),
        ],
        log: silent,
      });
    });
    first.start();
    await stopped;
    const left = await index.countWhere('placement IS NULL');
    expect(left).toBe(150 - 80);
    const again: string[] = [];
    const second = new ChunkBackfill({ chunks: index, derivers: [placements(again)], log: silent });
    second.start();
    await until(() => second.status().state === 'done');
    await second.stop();
    expect(again.length).toBe(left);
    expect(new Set([...seen, ...again]).size).toBe(150);
  });

  it('waits while the process ingests, then goes on', async () => {
    const { index } = await library(1);
    const seen: string[] = [];
    let ingesting = true;
    const backfill = new ChunkBackfill({ chunks: index, derivers: [placements(seen)], busy: () => ingesting, log: silent }, { pollMs: 10 });
    backfill.start();
    await until(() => backfill.status().state === 'waiting');
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
    ingesting = false;
    await until(() => backfill.status().state === 'done');
    await backfill.stop();
    expect(seen.length).toBe(50);
  });

  it('leaves rows deleted between its read and its write deleted, and a document written again whole', async () => {
    const { index } = await library(2);
    const seen: string[] = [];
    let once = false;
    const deriver = placements(seen, {
      batchRows: 100,
      before: async () => {
        if (once) return;
        once = true;
        // Meanwhile doc0 goes, and doc1 is written again with another text (a re-processing): the rows read before
        // it, with the old text, must not be written back over it.
        await index.deleteDocument('doc0');
        await index.deleteDocument('doc1');
        await index.add(rows('doc1', 50, 50).map((r) => ({ ...r, text: `${r.text} Written again.`, placement: null })), EMBEDDER);
      },
    });
    const backfill = new ChunkBackfill({ chunks: index, derivers: [deriver], log: silent });
    backfill.start();
    await until(() => backfill.status().state === 'done');
    await backfill.stop();
    expect(await index.count()).toBe(50);
    expect(await index.count('doc0')).toBe(0);
    const doc1 = await index.documentChunks('doc1');
    expect(doc1.map((c) => c.chunk_index)).toEqual(Array.from({ length: 50 }, (_, i) => 50 + i));
    expect(await index.countWhere('placement IS NULL')).toBe(0);
    // The new text, with a placement derived from it.
    for (const c of doc1) {
      expect(c.text.endsWith(' Written again.'), c.id).toBe(true);
      expect(JSON.parse(c.placement!).length, c.id).toBe(c.text.length);
    }
  });

  it('runs on the one holder of the lease; another shows the rows pending meanwhile', async () => {
    const { index } = await library(1);
    const locks = new LocalLocks();
    const held = await locks.tryAcquire('chunk-backfill');
    const seen: string[] = [];
    const backfill = new ChunkBackfill({ chunks: index, derivers: [placements(seen)], locks, log: silent }, { leaseRetryMs: 20 });
    backfill.start();
    await until(() => backfill.status().state === 'elsewhere' && backfill.status().derivers.placement!.pending === 50);
    expect(seen).toEqual([]);
    await held!.release();
    await until(() => backfill.status().state === 'done');
    await backfill.stop();
    expect(seen.length).toBe(50);
  });

  it('stops a deriver whose rows stay pending after its write, and finishes the others', async () => {
    const { index } = await library(1);
    const broken: ChunkDeriver = {
      name: 'broken',
      reads: [],
      writes: ['heading'],
      pending: 'heading IS NULL',
      derive: async (list) => list.map(() => ({ heading: null })),
    };
    const seen: string[] = [];
    const backfill = new ChunkBackfill({ chunks: index, derivers: [broken, placements(seen)], log: silent });
    backfill.start();
    await until(() => backfill.status().state === 'done');
    await backfill.stop();
    expect(backfill.status().derivers.broken).toMatchObject({ state: 'failed', error: expect.stringMatching(/stay pending/) });
    expect(seen.length).toBe(50);
  });
});
