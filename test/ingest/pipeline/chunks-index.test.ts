import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChunkIndex, type ChunkRow } from '../../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../../src/store/lancedb/connection.js';

/** The chunks table on a real LanceDB in a fresh directory. Vectors are synthetic: this tests the store, not a model. */
const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: 4 };

function unit(...v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
}

function row(user: string, project: string, doc: string, i: number, text: string, vector: Float32Array): ChunkRow {
  return {
    id: `${doc}:${i}`,
    user_id: user,
    project_id: project,
    document_id: doc,
    chunk_index: i,
    text,
    search_text: `Title\n\n${text}`,
    heading: i === 0 ? 'Intro' : null,
    page_start: i + 1,
    page_end: i + 1,
    vector,
  };
}

describe('ChunkIndex (LanceDB chunks table)', () => {
  let dir: string;
  let store: VectorStore;
  let index: ChunkIndex;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-chunks-'));
    store = await VectorStore.open(dir);
    index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds rows by keyword right after add, before any optimize, and after it', async () => {
    await index.add([row('u1', 'p1', 'd1', 0, 'penguins swim in cold water', unit(1, 0, 0, 0))], EMBEDDER);
    await index.optimize();
    await index.add([row('u1', 'p1', 'd2', 0, 'zebras graze on the savanna', unit(0, 1, 0, 0))], EMBEDDER);
    // d2 was written after the last index build: still found.
    const hits = await index.keywordSearch({ userId: 'u1', query: 'zebras', limit: 5 });
    expect(hits.map((h) => h.id)).toEqual(['d2:0']);
    expect(hits[0]!._score).toBeGreaterThan(0);
    expect(hits[0]).toMatchObject({ text: 'zebras graze on the savanna', heading: 'Intro', page_start: 1, project_id: 'p1' });
    await index.optimize();
    expect((await index.keywordSearch({ userId: 'u1', query: 'zebras', limit: 5 })).map((h) => h.id)).toEqual(['d2:0']);
  });

  it('scopes every search to the user, and to projects and documents when asked', async () => {
    await index.add(
      [
        row('u1', 'p1', 'd1', 0, 'glaciers carve valleys', unit(1, 0, 0, 0)),
        row('u1', 'p2', 'd2', 0, 'glaciers melt in spring', unit(0.9, 0.1, 0, 0)),
        row('u2', 'p3', 'd3', 0, 'glaciers of another tenant', unit(1, 0, 0, 0)),
      ],
      EMBEDDER,
    );
    const kw = await index.keywordSearch({ userId: 'u1', query: 'glaciers', limit: 10 });
    expect(kw.map((h) => h.id).sort()).toEqual(['d1:0', 'd2:0']);
    expect((await index.keywordSearch({ userId: 'u1', query: 'glaciers', limit: 10, projectIds: ['p2'] })).map((h) => h.id)).toEqual(['d2:0']);
    expect(await index.keywordSearch({ userId: 'u1', query: 'glaciers', limit: 10, projectIds: ['p3'] })).toEqual([]);
    expect(await index.keywordSearch({ userId: 'u1', query: 'glaciers', limit: 10, documentIds: [] })).toEqual([]);

    const vec = await index.vectorSearch({ userId: 'u1', vector: unit(1, 0, 0, 0), limit: 10 });
    expect(vec.map((h) => h.id)).toEqual(['d1:0', 'd2:0']);
    expect(vec[0]!._distance).toBeCloseTo(0, 5);
    expect(vec[1]!._distance).toBeGreaterThan(vec[0]!._distance);
    expect((await index.vectorSearch({ userId: 'u1', vector: unit(1, 0, 0, 0), limit: 10, documentIds: ['d2'] })).map((h) => h.id)).toEqual(['d2:0']);
    // A quote in a filter value is data, not SQL.
    expect(await index.vectorSearch({ userId: "u1' OR '1'='1", vector: unit(1, 0, 0, 0), limit: 10 })).toEqual([]);
  });

  it('deletes a document or a project at once', async () => {
    await index.add(
      [row('u1', 'p1', 'd1', 0, 'alpha beta', unit(1, 0, 0, 0)), row('u1', 'p1', 'd1', 1, 'alpha gamma', unit(0, 1, 0, 0)), row('u1', 'p2', 'd2', 0, 'alpha delta', unit(0, 0, 1, 0))],
      EMBEDDER,
    );
    expect(await index.count('d1')).toBe(2);
    await index.deleteDocument('d1');
    expect(await index.count('d1')).toBe(0);
    expect((await index.keywordSearch({ userId: 'u1', query: 'alpha', limit: 10 })).map((h) => h.id)).toEqual(['d2:0']);
    await index.deleteProject('p2');
    expect(await index.count()).toBe(0);
  });

  it('records the embedder and asks for a re-index when another one is configured', async () => {
    await index.add([row('u1', 'p1', 'd1', 0, 'alpha', unit(1, 0, 0, 0))], EMBEDDER);
    expect(index.indexInfo()).toMatchObject({ embedderId: EMBEDDER.id, dimension: 4 });
    expect(index.reindexRequired()).toBe(false);
    const other = await ChunkIndex.open(store, { embedderId: 'ollama:nomic-embed-text' });
    expect(other.reindexRequired()).toBe(true);
    await expect(other.add([row('u1', 'p1', 'd2', 0, 'beta', unit(0, 1, 0, 0))], EMBEDDER)).rejects.toThrow(
      'the chunk index needs re-indexing before new chunks can be written',
    );
    const seen: number[] = [];
    await other.rebuild({ id: 'ollama:nomic-embed-text', dimension: 3, embed: async (texts) => texts.map(() => unit(1, 1, 1)) }, (done) => seen.push(done));
    expect(other.reindexRequired()).toBe(false);
    expect(other.indexInfo()).toMatchObject({ embedderId: 'ollama:nomic-embed-text', dimension: 3 });
    expect(seen.at(-1)).toBe(1);
    expect((await other.keywordSearch({ userId: 'u1', query: 'alpha', limit: 5 })).map((h) => h.id)).toEqual(['d1:0']);
    await expect(other.add([row('u1', 'p1', 'd3', 0, 'x', unit(1, 0, 0, 0))], { id: 'ollama:nomic-embed-text', dimension: 3 })).rejects.toThrow('vector of length 4, index expects 3');
  });
});
