/**
 * Moving a document between projects (#21): one update by document id moves all its chunk rows (and, through
 * the window-writes wrapper, its builtin-reranker windows) in a single commit, so project-scoped searches find
 * it in exactly one project, and deleting its old project afterwards leaves it whole.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withWindowWrites } from '../../src/search/rerank/window-writes.js';
import { ChunkWindowIndex } from '../../src/store/lancedb/chunk-windows.js';
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';

const DIM = 8;
/** Window vectors: this test is about which rows move, not about their meaning (a store test, no model). */
const windowEmbedder = { embed: async (texts: string[]) => texts.map((_, i) => Float32Array.from({ length: DIM }, (_, k) => ((i + k) % 5) / 5 + 0.1)) };

function rows(documentId: string, projectId: string, n: number): ChunkRow[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `Chunk ${i} of ${documentId}. The marmots whistle on the scree. Eagles circle above the ridge.`;
    return {
      id: `${documentId}:${i}`,
      user_id: 'u1',
      project_id: projectId,
      document_id: documentId,
      chunk_index: i,
      text,
      search_text: text,
      heading: null,
      page_start: null,
      page_end: null,
      vector: Float32Array.from({ length: DIM }, (_, k) => Math.sin(i + k + 1)),
    };
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('moving a document between projects in the chunk index', () => {
  it('moves every chunk and window of the document in one update, and the old project no longer owns them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-move-'));
    dirs.push(dir);
    const store = await VectorStore.open(dir);
    const chunks = await ChunkIndex.open(store, { embedderId: 'test' });
    const windows = await ChunkWindowIndex.open(store, DIM);
    const index = withWindowWrites(chunks, windowEmbedder, windows);
    try {
      await index.add(rows('d1', 'pA', 5), { id: 'test', dimension: DIM });
      await index.add(rows('d2', 'pA', 3), { id: 'test', dimension: DIM });
      const inProject = async (projectIds: string[]) =>
        (await chunks.keywordSearch({ query: 'marmots', limit: 50, projectIds })).map((h) => h.id).sort();
      // The background pass the adds asked for, now: later it finds nothing changed and commits nothing.
      await chunks.optimize();
      const versionBefore = await (chunks as unknown as { table: { version(): Promise<number> } }).table.version();

      await index.moveDocument('d1', 'pB');

      // One commit for the chunks: a reader sees the version before (all in pA) or after (all in pB).
      expect(await (chunks as unknown as { table: { version(): Promise<number> } }).table.version()).toBe(versionBefore + 1);
      expect(await inProject(['pB'])).toEqual(['d1:0', 'd1:1', 'd1:2', 'd1:3', 'd1:4']);
      expect(await inProject(['pA'])).toEqual(['d2:0', 'd2:1', 'd2:2']);
      expect((await chunks.documentChunks('d1')).map((c) => c.project_id)).toEqual(['pB', 'pB', 'pB', 'pB', 'pB']);

      // Its old project is deleted: the moved document keeps its chunks and its windows; the other goes.
      const windowCount = await windows.count();
      await index.deleteProject('pA');
      expect(await chunks.count('d1')).toBe(5);
      expect(await chunks.count('d2')).toBe(0);
      const kept = await windows.windowsFor(['pA', 'pB'], ['d1:0', 'd1:4', 'd2:0']);
      expect([...kept.keys()].sort()).toEqual(['d1:0', 'd1:4']);
      expect(await windows.count()).toBeLessThan(windowCount);
      await index.deleteProject('pB');
      expect(await windows.count()).toBe(0);
    } finally {
      await chunks.close();
      await windows.close();
      store.close();
    }
  });
});
