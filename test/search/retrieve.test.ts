/**
 * The retriever's stage logic over fixed rankings: which lists run per mode, fusion, the reranker's
 * deadline and failure handling. The chunk lists are fixed example rankings (no model, no store): the
 * daemon tests cover the real ones.
 */
import { describe, expect, it } from 'vitest';
import { QueryVectorCache } from '../../src/search/query-cache.js';
import type { CandidateReranker } from '../../src/search/rerank/stage.js';
import { Retriever } from '../../src/search/retrieve.js';

const chunk = (id: string) => ({
  id,
  user_id: 'u',
  project_id: 'p',
  document_id: `d-${id}`,
  chunk_index: 0,
  text: `text ${id}`,
  search_text: `text ${id}`,
  heading: null,
  page_start: null,
  page_end: null,
});

function setup(vector: string[], keyword: string[]) {
  const calls = { vector: 0, keyword: [] as string[], embed: 0, hydrated: [] as string[][] };
  const retriever = new Retriever(
    {
      chunks: {
        async vectorSearch() {
          calls.vector++;
          return vector.map((id, i) => ({ id, document_id: `d-${id}`, _distance: i / 10 }));
        },
        async keywordSearch(q) {
          calls.keyword.push(q.query);
          return keyword.map((id, i) => ({ id, document_id: `d-${id}`, _score: 10 - i }));
        },
        async getMany(_userId, refs) {
          calls.hydrated.push(refs.map((r) => r.id));
          return refs.map((r) => chunk(r.id));
        },
      },
      embedder: {
        id: 'test',
        async embed(texts) {
          calls.embed += texts.length;
          return texts.map(() => Float32Array.from([1, 0]));
        },
      },
      cache: new QueryVectorCache(4),
    },
    { candidates: 10, rerankDepth: 3, rerankTimeoutMs: 50 },
  );
  return { retriever, calls };
}

const base = { userId: 'u', limit: 10, reranker: null };

describe('retriever', () => {
  it('fuses vector and keyword lists in hybrid mode, sending keyword search only plain terms', async () => {
    const { retriever, calls } = setup(['a', 'b', 'c'], ['c', 'a', 'x']);
    const out = await retriever.retrieve({ ...base, query: 'The (a OR b)* "cells"', mode: 'hybrid' });
    expect(out.ranked.map((r) => r.chunk.id)).toEqual(['a', 'c', 'b', 'x']);
    expect(calls.keyword).toEqual(['cells']);
    expect(out.warnings).toEqual([]);
    expect(calls.hydrated).toEqual([]); // ranking needs ids only
  });

  it('runs one list per single mode and skips keyword search for stop-word-only queries', async () => {
    const { retriever, calls } = setup(['a', 'b'], ['x']);
    expect((await retriever.retrieve({ ...base, query: 'cells', mode: 'vector' })).ranked.map((r) => r.chunk.id)).toEqual(['a', 'b']);
    expect((await retriever.retrieve({ ...base, query: 'cells', mode: 'keyword' })).ranked.map((r) => r.chunk.id)).toEqual(['x']);
    expect((await retriever.retrieve({ ...base, query: 'the of and', mode: 'keyword' })).ranked).toEqual([]);
    expect((await retriever.retrieve({ ...base, query: 'the of and', mode: 'hybrid' })).ranked.map((r) => r.chunk.id)).toEqual(['a', 'b']);
    expect(calls.keyword).toEqual(['cells']);
    expect(calls.embed).toBe(2); // "cells" and "the of and" once each: the LRU served the repeats
  });

  it('reorders the top N by the reranker and keeps the rest in fused order', async () => {
    const { retriever, calls } = setup(['a', 'b', 'c', 'd'], []);
    const reverse: CandidateReranker = {
      id: 'reverse',
      async score({ candidates }) {
        expect(candidates.map((c) => c.id)).toEqual(['a', 'b', 'c']);
        expect(candidates.map((c) => c.text)).toEqual(['text a', 'text b', 'text c']);
        expect(candidates[0]!.firstStage).toBe(1);
        return { scores: candidates.map((_, i) => i) };
      },
    };
    const out = await retriever.retrieve({ ...base, limit: 2, query: 'q', mode: 'vector', reranker: reverse });
    expect(out.ranked.map((r) => r.chunk.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(out.reranked).toBe('reverse');
    // Hydrating the shown head reads only what the reranker did not already load.
    const rows = await retriever.hydrate('u', out.ranked, out.loaded);
    expect([...rows.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(calls.hydrated).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('falls back to fused order with a warning when the reranker times out or fails', async () => {
    const { retriever } = setup(['a', 'b'], []);
    const hang: CandidateReranker = { id: 'slow', score: () => new Promise(() => {}) };
    const slow = await retriever.retrieve({ ...base, query: 'q', mode: 'vector', reranker: hang });
    expect(slow.ranked.map((r) => r.chunk.id)).toEqual(['a', 'b']);
    expect(slow.warnings).toEqual(['reranker "slow" failed (timed out after 50 ms); results are in first-stage (fused) order']);
    const broken: CandidateReranker = { id: 'nan', score: async () => ({ scores: [NaN, 1] }) };
    const bad = await retriever.retrieve({ ...base, query: 'q', mode: 'vector', reranker: broken });
    expect(bad.warnings).toEqual(['reranker "nan" failed (reranker returned a non-finite score); results are in first-stage (fused) order']);
  });
});

describe('query vector cache', () => {
  it('evicts the least recently used entry', () => {
    const c = new QueryVectorCache(2);
    const v = new Float32Array(1);
    c.set('m', 'a', v);
    c.set('m', 'b', v);
    c.get('m', 'a');
    c.set('m', 'c', v);
    expect([c.get('m', 'a'), c.get('m', 'b'), c.get('m', 'c')].map(Boolean)).toEqual([true, false, true]);
    expect(c.get('other-model', 'a')).toBeUndefined();
  });
});
