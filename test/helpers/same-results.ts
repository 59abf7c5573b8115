/**
 * The comparison a copied library passes (`migrate`, `backup` + `restore`): each query's hits are the same chunks of
 * the same documents with the same text, in the same order, scores within 1e-5.
 */
import { expect } from 'vitest';
import { api, type Daemon } from './daemon.js';

export interface Hit {
  id: string;
  document: string;
  text: string;
  score: number;
}

/** Each query's hits through POST /api/v1/search with `body` (limit, mode …) besides the query. */
export async function searchHits(d: Daemon, token: string, queries: readonly string[], body: Record<string, unknown>): Promise<Hit[][]> {
  const out: Hit[][] = [];
  for (const query of queries) {
    const res = await api(d, '/api/v1/search', { token, body: { query, ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push((res.body.results as { chunk_id: string; document: { id: string }; text: string; score: number }[]).map((r) => ({ id: r.chunk_id, document: r.document.id, text: r.text, score: r.score })));
  }
  return out;
}

export function expectSameResults(got: Hit[][], want: Hit[][]): void {
  expect(got.map((hits) => hits.map(({ id, document, text }) => ({ id, document, text })))).toEqual(want.map((hits) => hits.map(({ id, document, text }) => ({ id, document, text }))));
  got.forEach((hits, q) => hits.forEach((h, i) => expect(h.score).toBeCloseTo(want[q]![i]!.score, 5)));
}
