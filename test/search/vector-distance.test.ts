/**
 * The vector list's distances are cosine distances (1 − cos) whether the HNSW index answers or a flat scan does.
 * Search turns them into `scores.vector.similarity` and holds them against the relevance floor, so a scale that
 * changed with the index (LanceDB's IVF_HNSW_SQ answers 2 − 2·cos, squared L2, while every row is indexed) would
 * move the floor and misorder freshly written rows against indexed ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChunkIndex, type ChunkRow } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { rng } from '../../bench/scifact.js';

const DIM = 16;
const model = { id: 'builtin:all-MiniLM-L6-v2', dimension: DIM };
const rand = rng(5);

function unit(v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
}
const randomUnit = () => unit(Array.from({ length: DIM }, () => rand() - 0.5));
const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

function row(i: number, vector: Float32Array): ChunkRow {
  return { id: `d${i}:0`, user_id: 'u', project_id: 'p', document_id: `d${i}`, chunk_index: 0, text: `chunk ${i}`, search_text: `chunk ${i}`, heading: null, page_start: null, page_end: null, vector };
}

describe('vector distances', () => {
  let dir: string;
  let store: VectorStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-distance-'));
    store = await VectorStore.open(dir);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are 1 − cos through the HNSW index, and still when fresh rows are scanned beside it', async () => {
    const index = await ChunkIndex.open(store, { embedderId: model.id }, { ann: { minRows: 200 } });
    const rows = Array.from({ length: 400 }, (_, i) => row(i, randomUnit()));
    await index.add(rows, model);
    await index.optimize();
    expect(await index.vectorIndex()).toEqual({ segments: 1, indexedRows: 400 });
    const query = randomUnit();
    const byId = new Map(rows.map((r) => [r.id, r.vector]));
    const check = async () => {
      const hits = await index.vectorSearch({ userId: 'u', vector: query, limit: 20 });
      expect(hits).toHaveLength(20);
      for (const h of hits) expect(h._distance).toBeCloseTo(1 - cos(query, byId.get(h.id)!), 3);
      // Nearest first, by the true distance.
      const d = hits.map((h) => h._distance);
      expect([...d].sort((a, b) => a - b)).toEqual(d);
    };
    await check();
    const fresh = row(1000, unit([...query].map((x, i) => x + (i % 2 ? 0.3 : -0.3))));
    byId.set(fresh.id, fresh.vector);
    await index.add([fresh], model);
    await check();
    await index.close();
  });
});
