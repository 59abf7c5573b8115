/**
 * The retriever's stage logic over fixed rankings: which lists run per mode, fusion, the reranker's
 * deadline and failure handling. The chunk lists are fixed example rankings (no model, no store): the
 * daemon tests cover the real ones.
 */
import { describe, expect, it } from 'vitest';
import { QueryVectorCache } from '../../src/search/query-cache.js';
import type { CandidateReranker } from '../../src/search/rerank/stage.js';
import { DEFAULT_RETRIEVE, type RetrieveOptions, Retriever } from '../../src/search/retrieve.js';

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
  units: null,
});

function setup(vector: string[], keyword: string[], opts: Partial<RetrieveOptions> = {}) {
  const calls = { vector: 0, keyword: [] as string[], embed: 0, hydrated: [] as string[][] };
  const retriever = new Retriever(
    {
      chunks: {
        async vectorSearch(q) {
          calls.vector++;
          return vector.slice(0, q.limit).map((id, i) => ({ id, document_id: `d-${id}`, _distance: i / 10 }));
        },
        async keywordSearch(q) {
          calls.keyword.push(q.query);
          return keyword.slice(0, q.limit).map((id, i) => ({ id, document_id: `d-${id}`, _score: 10 - i }));
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
    // Plain RRF (k 60, equal weights) unless a test says otherwise: these tests are about the stages.
    { ...DEFAULT_RETRIEVE, keywordDepth: 10, vectorDepth: 10, fusion: { method: 'rrf', k: 60, vectorWeight: 1, keywordWeight: 1 }, floor: null, rerankDepth: 3, rerankTimeoutMs: 50, ...opts },
  );
  return { retriever, calls };
}

const base = { projectIds: ['p'], asker: 'u1', reranker: null };

describe('retriever', () => {
  it('fuses vector and keyword lists in hybrid mode, sending keyword search only plain terms', async () => {
    const { retriever, calls } = setup(['a', 'b', 'c'], ['c', 'a', 'x']);
    const out = await retriever.retrieve({ ...base, query: 'The (a OR b)* "cells"', mode: 'hybrid' });
    expect(out.ranked.map((r) => r.chunk.id)).toEqual(['a', 'c', 'b', 'x']);
    expect(calls.keyword).toEqual(['cells']);
    expect(out.warnings).toEqual([]);
    expect(calls.hydrated).toEqual([]); // ranking needs ids only
    // The daemon's fusion weighs scores, not ranks: similarities a 1.0, b 0.9, c 0.8 (scaled by the best, 1.0) and
    // BM25 c 10, a 9, x 8 (scaled by 10), half each: a 0.95, c 0.9, b 0.45, x 0.4.
    const scored = setup(['a', 'b', 'c'], ['c', 'a', 'x'], { fusion: DEFAULT_RETRIEVE.fusion });
    const out2 = await scored.retriever.retrieve({ ...base, query: 'cells', mode: 'hybrid' });
    expect(out2.ranked.map((r) => [r.chunk.id, Number(r.score.toFixed(3))])).toEqual([
      ['a', 0.95],
      ['c', 0.9],
      ['b', 0.45],
      ['x', 0.4],
    ]);
  });

  it('starts the vector list once the query is embedded, while the keyword list still runs', async () => {
    let vectorStarted!: () => void;
    const started = new Promise<void>((resolve) => (vectorStarted = resolve));
    const retriever = new Retriever({
      chunks: {
        async vectorSearch() {
          vectorStarted();
          return [{ id: 'a', document_id: 'd-a', _distance: 0 }];
        },
        async keywordSearch() {
          await started; // never resolves when the vector list waits for this one
          return [{ id: 'b', document_id: 'd-b', _score: 1 }];
        },
        async getMany() {
          return [];
        },
      },
      embedder: { id: 'test', embed: async (texts) => texts.map(() => Float32Array.from([1, 0])) },
    });
    const out = await retriever.retrieve({ ...base, query: 'cells', mode: 'hybrid' });
    expect(out.ranked.map((r) => r.chunk.id).sort()).toEqual(['a', 'b']);
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
    const out = await retriever.retrieve({ ...base, query: 'q', mode: 'vector', reranker: reverse });
    expect(out.ranked.map((r) => r.chunk.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(out.reranked).toBe('reverse');
    // Hydrating the shown head reads only what the reranker did not already load.
    const rows = await retriever.hydrate(['p'], out.ranked, out.loaded);
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

describe('relevance floor and counts', () => {
  const ids = (out: { ranked: { chunk: { id: string } }[] }) => out.ranked.map((r) => r.chunk.id);

  it('keeps keyword matches and neighbours at the floor, and drops neighbours below it', async () => {
    // Similarities: a 1.0, b 0.9, c 0.8, d 0.7.
    const { retriever } = setup(['a', 'b', 'c', 'd'], ['d'], { floor: 0.85 });
    const out = await retriever.retrieve({ ...base, query: 'cells', mode: 'hybrid' });
    expect(ids(out)).toEqual(['d', 'a', 'b']);
    expect(out.weak).toBe(false);
    expect(out.complete).toBe(true);
    // Vector mode: only the neighbours at the floor.
    expect(ids(await retriever.retrieve({ ...base, query: 'cells', mode: 'vector' }))).toEqual(['a', 'b']);
  });

  it('is weak with no keyword match and nothing at the floor: the nearest neighbours stand in', async () => {
    const { retriever } = setup(['a', 'b', 'c'], [], { floor: 1.5 });
    const out = await retriever.retrieve({ ...base, query: 'xyzzy plugh', mode: 'hybrid' });
    expect(out.weak).toBe(true);
    expect(ids(out)).toEqual(['a', 'b', 'c']);
    const keyword = await retriever.retrieve({ ...base, query: 'xyzzy plugh', mode: 'keyword' });
    expect(keyword).toMatchObject({ ranked: [], weak: false, complete: true });
  });

  it('is incomplete only when a list stopped at its depth while still matching', async () => {
    const full = setup(['a', 'b', 'c'], ['x', 'y', 'z'], { keywordDepth: 3, vectorDepth: 3, floor: 0.5 });
    expect((await full.retriever.retrieve({ ...base, query: 'cells', mode: 'keyword' })).complete).toBe(false);
    // The vector list is full and its last neighbour (0.8) is at the floor: more may follow.
    expect((await full.retriever.retrieve({ ...base, query: 'cells', mode: 'vector' })).complete).toBe(false);
    // Its last neighbour is below the floor: every match was seen.
    const below = setup(['a', 'b', 'c'], [], { vectorDepth: 3, floor: 0.85 });
    expect((await below.retriever.retrieve({ ...base, query: 'cells', mode: 'vector' })).complete).toBe(true);
    // With no floor every neighbour counts, so a full vector list is never known to be complete.
    const none = setup(['a', 'b', 'c'], [], { vectorDepth: 3, floor: null });
    expect((await none.retriever.retrieve({ ...base, query: 'cells', mode: 'vector' })).complete).toBe(false);
  });

  it('reads the keyword list to the first-page depth for a first page, and says it was cut', async () => {
    const { retriever, calls } = setup([], ['a', 'b', 'c', 'd', 'e'], { keywordDepth: 5, firstPageKeywordDepth: 2 });
    const first = await retriever.retrieve({ ...base, query: 'cells', mode: 'keyword', list: 'first-page' });
    expect(ids(first)).toEqual(['a', 'b']);
    expect(first).toMatchObject({ complete: false, keywordsCut: true });
    const full = await retriever.retrieve({ ...base, query: 'cells', mode: 'keyword' });
    expect(ids(full)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(full).toMatchObject({ complete: false, keywordsCut: true });
    expect(calls.keyword).toHaveLength(2);
    // A list that ends before the depth was not cut.
    const short = setup([], ['a'], { keywordDepth: 5, firstPageKeywordDepth: 2 });
    expect(await short.retriever.retrieve({ ...base, query: 'cells', mode: 'keyword', list: 'first-page' })).toMatchObject({ complete: true, keywordsCut: false });
  });

  it('drops the chunks of documents the search may not show before ranking', async () => {
    const { retriever } = setup(['a', 'b', 'c'], ['c', 'b']);
    const asked: string[][] = [];
    const out = await retriever.retrieve({
      ...base,
      query: 'cells',
      mode: 'hybrid',
      visible: async (docs) => {
        asked.push([...docs].sort());
        return new Set(['d-b', 'd-c']);
      },
    });
    expect(asked).toEqual([['d-a', 'd-b', 'd-c']]);
    expect(ids(out)).toEqual(['b', 'c']);
    // b is now first in the vector list.
    expect(out.ranked[0]!.scores.vector!.rank).toBe(1);
  });
});

describe('first-stage lists', () => {
  it('orders equal scores by id, whatever order the index returns them in', async () => {
    const lists = (order: string[]) =>
      new Retriever(
        {
          chunks: {
            vectorSearch: async () => [],
            keywordSearch: async () => order.map((id) => ({ id, document_id: `d-${id}`, _score: 1 })),
            getMany: async () => [],
          },
          embedder: { id: 'test', embed: async (texts) => texts.map(() => Float32Array.from([1, 0])) },
        },
        { ...DEFAULT_RETRIEVE, floor: null },
      );
    const one = await lists(['c', 'a', 'b']).retrieve({ ...base, query: 'cells', mode: 'keyword' });
    const two = await lists(['b', 'c', 'a']).retrieve({ ...base, query: 'cells', mode: 'keyword' });
    expect(one.ranked.map((r) => r.chunk.id)).toEqual(['a', 'b', 'c']);
    expect(two.ranked.map((r) => r.chunk.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('query vector cache', () => {
  it('evicts the least recently used entry', () => {
    const c = new QueryVectorCache(2);
    const v = new Float32Array(1);
    c.set('m', 'u1', 'a', v);
    c.set('m', 'u1', 'b', v);
    c.get('m', 'u1', 'a');
    c.set('m', 'u1', 'c', v);
    expect([c.get('m', 'u1', 'a'), c.get('m', 'u1', 'b'), c.get('m', 'u1', 'c')].map(Boolean)).toEqual([true, false, true]);
    expect(c.get('other-model', 'u1', 'a')).toBeUndefined();
    expect(c.get('m', 'u2', 'a')).toBeUndefined();
  });
});
