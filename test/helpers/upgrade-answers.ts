/**
 * How today's answers on a release's library are held against what the release answered
 * (test/store/upgrade-from-release.test.ts), as docs/operations.md ("Upgrading") promises: on the machine the
 * release's answers were computed on, the same in every field, numbers within 1e-5; on a CPU with other vector
 * instructions, within the drift its query vectors may have (ACROSS_CPUS).
 */
import { expect } from 'vitest';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../src/models/builtin/minilm-embedder.js';
import { relevanceFloor } from '../../src/search/floor.js';
import type { Observed } from './upgrade-library.js';

/**
 * What docs/operations.md promises of answers on a CPU with other vector instructions than the release's: a query's
 * similarities within 1e-2 of the release's (its vector is computed with other int8 kernels; the stored vectors are
 * the same), scores within 0.02.
 */
export const ACROSS_CPUS = { similarity: 1e-2, score: 0.02 };
const FLOOR = relevanceFloor(BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION])!;

/**
 * The release's numbers, each as "within 1e-5": a query is embedded by today's model graph, whose float operations
 * may round differently in the last bits (mean pooling moved into the graph in GRAPH_REVISION 4).
 */
const near = (v: unknown): unknown =>
  typeof v === 'number' && !Number.isInteger(v)
    ? expect.closeTo(v, 5)
    : Array.isArray(v)
      ? v.map(near)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, near(x)]))
        : v;

type Search = Observed['searches'][number];

/**
 * Where in a chunk the answer lies (`highlights`) is chosen by each release's answer-sentence selection (it marked
 * keyword hits until 0.2.0, the best-answering sentence since, issue 53): the stored library does not hold it.
 */
const CHOSEN_ANEW = new Set(['highlights']);
const compared = (fields: Record<string, unknown>): string[] => Object.keys(fields).filter((k) => !CHOSEN_ANEW.has(k));

/**
 * A keyword match's BM25 score comes from the keyword analysis, which an upgrade redoes in the background
 * (issue 59, docs/operations.md "Upgrading"): the release's index serves until the library is re-analysed, then the
 * new one, whose scores differ (its forms and weights are its own). Which chunks match, their order and the fused
 * scores (each list normalised by its best) are held as before.
 */
function withoutBm25(fields: Record<string, unknown>): Record<string, unknown> {
  const scores = fields.scores as { keyword?: Record<string, unknown> } | undefined;
  if (!scores?.keyword) return fields;
  const { bm25: _bm25, ...keyword } = scores.keyword;
  return { ...fields, scores: { ...scores, keyword } };
}

/** The same projects, documents and searches asked; then `check` on each search's results, today's and the release's. */
function compareSearches(now: Observed, then: Observed, check: (search: Search, before: Search, what: string) => void): void {
  expect(now.projects).toEqual(then.projects);
  expect(now.documents).toEqual(then.documents);
  expect(now.searches.map((s) => [s.user, s.body])).toEqual(then.searches.map((s) => [s.user, s.body]));
  now.searches.forEach((search, i) => check(search, then.searches[i]!, `${search.user}: ${JSON.stringify(search.body)}`));
}

/** Today's answers against the release's: everything it recorded, the scores and similarities within 1e-5. */
export function expectSameAnswers(now: Observed, then: Observed): void {
  compareSearches(now, then, (search, before, what) => {
    expect(search.results.map((r) => r.chunk_id), what).toEqual(before.results.map((r) => r.chunk_id));
    search.results.forEach((r, j) => {
      const { score, ...fields } = before.results[j]!;
      expect(Math.abs((r.score as number) - (score as number)), `${what}, result ${j}: score ${String(r.score)} against ${String(score)}`).toBeLessThanOrEqual(1e-5);
      // Fields the release answered with (a later release may add others).
      const keys = compared(fields);
      expect(withoutBm25(Object.fromEntries(keys.map((k) => [k, r[k]]))), what).toEqual(near(withoutBm25(Object.fromEntries(keys.map((k) => [k, fields[k]])))));
    });
  });
}

type Hit = Search['results'][number];
type Scores = { vector?: { similarity: number }; keyword?: { bm25: number } };

/**
 * Today's answers against the release's, computed on another CPU (ACROSS_CPUS): the same projects and documents; in
 * each search, a result on one side only is at an edge (its score within the drift of its page's last, or its
 * similarity within the drift of the relevance floor); results on both sides are within the drift in score and
 * similarity, their keyword scores and every other field as the release answered; and two results trade places only
 * when the release scored them within twice the drift of each other.
 */
export function expectAnswersAcrossCpus(now: Observed, then: Observed): void {
  compareSearches(now, then, (search, before, what) => {
    const similarity = (r: Hit) => (r.scores as Scores).vector?.similarity;
    const atEdge = (page: Hit[], r: Hit) => (r.score as number) - (page.at(-1)!.score as number) <= ACROSS_CPUS.score || Math.abs((similarity(r) ?? Infinity) - FLOOR) <= ACROSS_CPUS.similarity;
    const was = new Map(before.results.map((r) => [r.chunk_id, r]));
    const is = new Map(search.results.map((r) => [r.chunk_id, r]));
    for (const r of before.results) if (!is.has(r.chunk_id)) expect(atEdge(before.results, r), `${what}: ${r.chunk_id} (score ${String(r.score)}) is gone`).toBe(true);
    for (const r of search.results) if (!was.has(r.chunk_id)) expect(atEdge(search.results, r), `${what}: ${r.chunk_id} (score ${String(r.score)}) is new`).toBe(true);
    const common = search.results.filter((r) => was.has(r.chunk_id));
    for (const r of common) {
      const b = was.get(r.chunk_id)!;
      const where = `${what}, ${r.chunk_id}`;
      expect(Math.abs((r.score as number) - (b.score as number)), `${where}: score ${String(r.score)} against ${String(b.score)}`).toBeLessThanOrEqual(ACROSS_CPUS.score);
      const [x, y] = [r.scores as Scores, b.scores as Scores];
      // No vector match on one side: its similarity fell below the floor, so the other side's must be at the floor.
      expect(Math.abs((x.vector?.similarity ?? FLOOR) - (y.vector?.similarity ?? FLOOR)), `${where}: similarity`).toBeLessThanOrEqual(ACROSS_CPUS.similarity);
      expect(x.keyword === undefined, `${where}: a keyword match on one side only`).toBe(y.keyword === undefined);
      const { score: _s, scores: _x, ...fields } = b;
      const keys = compared(fields);
      expect(Object.fromEntries(keys.map((k) => [k, r[k]])), where).toEqual(near(Object.fromEntries(keys.map((k) => [k, fields[k]]))));
    }
    common.forEach((r, j) => {
      for (const later of common.slice(j + 1)) {
        const [a, z] = [was.get(r.chunk_id)!, was.get(later.chunk_id)!];
        if (before.results.indexOf(a) > before.results.indexOf(z)) {
          expect(Math.abs((a.score as number) - (z.score as number)), `${what}: ${r.chunk_id} and ${later.chunk_id} traded places`).toBeLessThanOrEqual(2 * ACROSS_CPUS.score);
        }
      }
    });
  });
}
