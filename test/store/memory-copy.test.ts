/**
 * A chunks table without a vector index answers its unfiltered vector searches, and the takes of the rows a search
 * shows, from a copy of it in memory (memory-copy.ts) once two searches in a row met its version: the same list an
 * exact scan gives — every row of the scope, nearest first by 1 − cos — within any set of projects and documents, with
 * the trash left out, the rows' columns as they are at their addresses, and after the table moved (rows added, deleted,
 * moved to another project) only from a copy of the version searched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { rng } from '../../bench/scifact.js';
import { waitFor } from '../helpers/eventually.js';

const DIM = 24;
const model = { id: 'builtin:all-MiniLM-L6-v2', dimension: DIM };
const rand = rng(11);
const randomVector = () => Float32Array.from({ length: DIM }, () => rand() - 0.5);

function row(doc: number, chunk: number, vector: Float32Array, project: string): ChunkRow {
  const id = `d${doc}:${chunk}`;
  return { id, user_id: 'u', project_id: project, document_id: `d${doc}`, chunk_index: chunk, text: id, search_text: id, heading: null, page_start: null, page_end: null, vector };
}

describe('a small table in memory', () => {
  let dir: string;
  let store: VectorStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-memory-copy-'));
    store = await VectorStore.open(dir);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers exactly, within the scope, from the version searched only', async () => {
    const index = await ChunkIndex.open(store, { embedderId: model.id }, { ann: { minRows: 10_000 } });
    // 300 documents of 3 chunks in three projects; vectors not of unit length (cosine, not dot product).
    const rows = Array.from({ length: 900 }, (_, i) => row(Math.floor(i / 3), i % 3, randomVector(), ['a', 'b', 'c'][Math.floor(i / 3) % 3]!));
    await index.add(rows, model);
    const live = new Map(rows.map((r) => [r.id, r]));
    /** Languages the background fill wrote (writeColumns), by chunk id. */
    const languages = new Map<string, string>();
    const cosineDistance = (a: Float32Array, b: Float32Array) => {
      let dot = 0;
      let na = 0;
      let nb = 0;
      for (let i = 0; i < DIM; i++) {
        dot += a[i]! * b[i]!;
        na += a[i]! * a[i]!;
        nb += b[i]! * b[i]!;
      }
      return 1 - dot / Math.sqrt(na * nb);
    };
    type Scope = { projectIds: string[]; documentIds?: string[]; exclude?: { documentIds: string[]; rows: number } };
    /** The exact answer: every live row of the scope by its cosine distance. */
    const exact = (vector: Float32Array, scope: Scope, limit: number) =>
      [...live.values()]
        .filter((r) => scope.projectIds.includes(r.project_id) && (!scope.documentIds || scope.documentIds.includes(r.document_id)) && !scope.exclude?.documentIds.includes(r.document_id))
        .map((r) => ({ id: r.id, distance: cosineDistance(vector, r.vector as Float32Array) }))
        .sort((x, y) => x.distance - y.distance)
        .slice(0, limit);
    const scopes: Scope[] = [
      { projectIds: ['a', 'b', 'c'] },
      { projectIds: ['b'] },
      { projectIds: ['a', 'c'], documentIds: ['d0', 'd2', 'd5', 'd6', 'd299', 'd1'] },
      { projectIds: ['a', 'b', 'c'], exclude: { documentIds: Array.from({ length: 100 }, (_, i) => `d${i}`), rows: 300 } },
      { projectIds: ['nobody'] },
    ];
    /** Every scope searched at limits below and above its size, each answer held to the exact one. */
    const checkAll = async () => {
      for (const scope of scopes) {
        for (const limit of [1, 10, 200, 1000]) {
          const vector = randomVector();
          const hits = await index.vectorSearch({ vector, limit, ...scope });
          const want = exact(vector, scope, limit);
          expect(hits.map((h) => h.id)).toEqual(want.map((w) => w.id));
          hits.forEach((h, i) => expect(Math.abs(h._distance - want[i]!.distance)).toBeLessThan(1e-5));
          // A hit's row address takes its row, as it is now (hydration reads the shown rows by it).
          const taken = await index.getMany(scope.projectIds, hits.slice(0, 3));
          expect(taken.map((c) => c.id).sort()).toEqual(hits.slice(0, 3).map((h) => h.id).sort());
          for (const c of taken) expect([c.text, c.project_id, c.document_id, c.language]).toEqual([c.id, live.get(c.id)!.project_id, live.get(c.id)!.document_id, languages.get(c.id)]);
        }
      }
    };
    /** Two searches in a row meet the version; the copy of it is read in the background. */
    const held = async () => {
      await waitFor(async () => {
        await index.vectorSearch({ vector: randomVector(), limit: 5, projectIds: ['a'] });
        return (await index.inMemory())?.rows === live.size;
      }, 20_000, 'the table to be held in memory');
      return (await index.inMemory())!.version;
    };

    // Before the copy is held, LanceDB's scan answers; after, the copy: the same lists.
    expect(await index.inMemory()).toBeUndefined();
    await checkAll();
    const first = await held();
    await checkAll();
    expect((await index.inMemory())?.version).toBe(first);

    // The table moves: rows deleted, a document moved to another project, rows added. Searches of the new version
    // are answered by LanceDB until its copy is read (at most one read every few seconds), and then by the copy.
    await index.deleteDocuments(['d3', 'd4']);
    for (const id of ['d3:0', 'd3:1', 'd3:2', 'd4:0', 'd4:1', 'd4:2']) live.delete(id);
    await index.moveDocument('d7', 'c');
    for (const c of [0, 1, 2]) live.get(`d7:${c}`)!.project_id = 'c';
    // The background fill writes a column of rows in place (their language): a take must read the new value, whatever
    // address LanceDB writes the row at.
    const filled = [...live.keys()].filter((_, i) => i % 7 === 0);
    await index.writeColumns(filled.map((id) => ({ id, language: 'de' })), ['language']);
    for (const id of filled) languages.set(id, 'de');
    const added = Array.from({ length: 30 }, (_, i) => row(1000 + Math.floor(i / 3), i % 3, randomVector(), 'b'));
    await index.add(added, model);
    for (const r of added) live.set(r.id, r);
    await checkAll();
    const second = await held();
    expect(second).toBeGreaterThan(first);
    await checkAll();
    await index.close();
  }, 60_000);

  it('is not held once the table has a vector index', async () => {
    const index = await ChunkIndex.open(store, { embedderId: model.id }, { ann: { minRows: 200 } });
    await index.add(Array.from({ length: 300 }, (_, i) => row(i, 0, randomVector(), 'p')), model);
    for (let i = 0; i < 3; i++) await index.vectorSearch({ vector: randomVector(), limit: 5, projectIds: ['p'] });
    await waitFor(async () => (await index.inMemory()) !== undefined, 20_000, 'the table to be held in memory');
    await index.optimize();
    expect(await index.vectorIndex()).toEqual({ segments: 1, indexedRows: 300 });
    await index.vectorSearch({ vector: randomVector(), limit: 5, projectIds: ['p'] });
    expect(await index.inMemory()).toBeUndefined();
    await index.close();
  }, 60_000);
});
