/**
 * Ingest's synchronous work on the main thread is done in turns (core/loop-turns.ts): a slice's keyword analysis, its
 * answer units and a model batch's tokenising give the event loop a turn between texts once they have held it a
 * while, so a search that arrives meanwhile is served between two texts instead of after all of them. Shown by order,
 * not timings: a callback queued with setImmediate as the work starts runs before the work ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mapInTurns } from '../../src/core/loop-turns.js';
import { languageDeriver } from '../../src/ingest/language-backfill.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { BuiltinEmbedder } from '../../src/models/builtin/minilm-embedder.js';
import { embedWithUnits } from '../../src/ingest/unit-vectors.js';
import type { Chunk } from '../../src/ingest/types.js';
import { keywordFields, toRows } from '../../src/ingest/write.js';
import { TEST_MODEL_CACHE } from '../helpers/daemon.js';
import { openFresh } from '../helpers/store-dialects.js';

/** A seeded run of `n` letters of `letters`, no space. */
function run(letters: string, n: number, seed: number): string {
  const set = [...letters];
  let out = '';
  for (let i = 0; i < n; i++) out += set[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % set.length];
  return out;
}

/** Whether a setImmediate queued now has run by the time `work` settles. */
async function loopTurnedDuring<T>(work: () => Promise<T> | T): Promise<{ turned: boolean; value: T }> {
  let turned = false;
  setImmediate(() => (turned = true));
  const value = await work();
  return { turned, value };
}

const KANA = 'あいうえおかきくけこさしすせそたちつてとなにぬねのアイウエオカキクケコ';

describe('ingest work in turns', () => {
  it('mapInTurns maps every item in order, giving the loop a turn once a turn has lasted turnMs', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('loop'));
    const out = await mapInTurns([1, 2, 3], (n, i) => (order.push(`item ${i}`), n * 2), 0);
    expect(out).toEqual([2, 4, 6]);
    expect(order).toEqual(['item 0', 'loop', 'item 1', 'item 2']);
  });

  it("analyses a slice's chunks in turns: ~0.5 s of kana segmentation is not one piece", async () => {
    // 64 chunks (a pipeline slice) of 4,000 kana: ICU segments each, ~8 ms a chunk here.
    const chunks: Chunk[] = Array.from({ length: 64 }, (_, index) => {
      const text = run(KANA, 4000, index + 1);
      return { index, text, embedText: text, headings: [], tokenCount: 3, placement: { overlap: 0, separator: '', page_starts: [] } };
    });
    const embedded = chunks.map(() => ({ vector: new Float32Array(4), units: null }));
    const { turned, value: rows } = await loopTurnedDuring(() => toRows({ documentId: 'd', userId: 'u', projectId: 'p' }, chunks, embedded));
    expect(turned).toBe(true);
    expect(rows.map((r) => r.id)).toEqual(chunks.map((c) => `d:${c.index}`));
    expect(rows[63]).toMatchObject(keywordFields(chunks[63]!.text, chunks[63]!.embedText, undefined));
  });

  it("re-analyses a backfill batch's rows in turns (chunks stored by an earlier analysis)", async () => {
    const db = await openFresh('sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-turns-'));
    const store = await VectorStore.open(dir);
    try {
      const chunks = await ChunkIndex.open(store, { embedderId: 'test' });
      const documents = new DocumentStore(db.db, new JobStore(db.db, Date.now), Date.now);
      const rows = Array.from({ length: 64 }, (_, i) => {
        const text = run(KANA, 4000, i + 100);
        return { id: `d:${i}`, document_id: 'd', text, search_text: text };
      });
      const { turned, value } = await loopTurnedDuring(() => languageDeriver({ chunks, documents }).derive(rows));
      expect(turned).toBe(true);
      expect(value[0]).toEqual(keywordFields(rows[0]!.text, rows[0]!.search_text, undefined));
    } finally {
      store.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the built-in model', () => {
    const lanes: boolean[] = [];
    let turned = false;
    const embedder = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8', onRun: () => lanes.push(turned) });
    afterAll(() => embedder.close());

    it("tokenises a batch's texts in turns: 8 long texts are not one piece before the pass", async () => {
      await embedder.init();
      // Eight runs of 200,000 letters (what chunks of earlier releases held): one batch, ~0.2 s of tokenising each.
      const texts = Array.from({ length: 8 }, (_, i) => run('abcdefghijklmnopqrstuvwxyz', 200_000, i + 1));
      setImmediate(() => (turned = true));
      const vectors = await embedder.embed(texts, { kind: 'passage' });
      expect(vectors).toHaveLength(8);
      // The pass started (onRun) after the loop had a turn: the tokenising gave it one.
      expect(lanes).toEqual([true]);
    }, 120_000);

    it("finds a slice's answer units in turns", async () => {
      const chunks = Array.from({ length: 16 }, (_, i) => {
        const text = `${run('abcdefghijklmnopqrstuvwxyz', 200_000, i + 20)}.`;
        return { text, embedText: text };
      });
      const { turned: unitsTurned, value } = await loopTurnedDuring(() => embedWithUnits({ embed: async (t) => t.map(() => new Float32Array(4)) }, chunks, { kind: 'passage' }));
      expect(unitsTurned).toBe(true);
      expect(value).toHaveLength(16);
    }, 120_000);
  });
});
