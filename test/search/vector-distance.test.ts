/**
 * The vector list's distances are cosine distances (1 − cos) whether the HNSW index answers or a flat scan does.
 * While the index covers every row its own (quantised) distances are used, halved; once fresh rows are scanned
 * beside it, every candidate is refined to its exact distance.
 * Search turns them into `scores.vector.similarity` and holds them against the relevance floor, so a scale that
 * changed with the index (LanceDB's IVF_HNSW_SQ answers 2 − 2·cos, squared L2, while every row is indexed) would
 * move the floor and misorder freshly written rows against indexed ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
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

function row(i: number, vector: Float32Array, project: string): ChunkRow {
  return { id: `d${i}:0`, user_id: 'u', project_id: project, document_id: `d${i}`, chunk_index: 0, text: `chunk ${i}`, search_text: `chunk ${i}`, heading: null, page_start: null, page_end: null, vector };
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
    // A few rows of a small project, so that a scoped search's filter passes over the index as well.
    const rows = Array.from({ length: 400 }, (_, i) => row(i, randomUnit(), i % 50 === 0 ? 'small' : 'p'));
    await index.add(rows, model);
    await index.optimize();
    expect(await index.vectorIndex()).toEqual({ segments: 1, indexedRows: 400 });
    const query = randomUnit();
    const byId = new Map(rows.map((r) => [r.id, r.vector]));
    /** The hits' largest difference from the exact cosine distance. */
    const check = async (scope: { projectIds: string[] }, n: number) => {
      const hits = await index.vectorSearch({ vector: query, limit: 20, ...scope });
      expect(hits).toHaveLength(n);
      const off = hits.map((h) => Math.abs(h._distance - (1 - cos(query, byId.get(h.id)!))));
      // The 8-bit index's error is a few thousandths at 16 dimensions; a distance on another scale is off by ~1.
      expect(Math.max(...off)).toBeLessThan(0.01);
      // Nearest first.
      const d = hits.map((h) => h._distance);
      expect([...d].sort((a, b) => a - b)).toEqual(d);
      return Math.max(...off);
    };
    // Every row indexed: the index's own distances, halved, not refined ones read back from the vectors.
    expect(await check({ projectIds: ['p', 'small'] }, 20)).toBeGreaterThan(1e-5);
    expect(await check({ projectIds: ['small'] }, 8)).toBeGreaterThan(1e-5);
    const fresh = row(1000, unit([...query].map((x, i) => x + (i % 2 ? 0.3 : -0.3))), 'small');
    byId.set(fresh.id, fresh.vector);
    await index.add([fresh], model);
    // A fresh row is scanned beside the index: every candidate refined to its exact distance.
    expect(await check({ projectIds: ['p', 'small'] }, 20)).toBeLessThan(1e-5);
    expect(await check({ projectIds: ['small'] }, 9)).toBeLessThan(1e-5);
    await index.optimize();
    expect(await check({ projectIds: ['p', 'small'] }, 20)).toBeGreaterThan(1e-5);
    await index.close();
  });
});
