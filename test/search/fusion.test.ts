import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion, RRF_K, scoreFusion } from '../../src/search/fusion.js';
import { builtinScores } from '../../src/search/rerank/builtin.js';

const ids = (xs: string[]) => xs.map((id) => ({ id }));

describe('score fusion (convex combination of max-normalised scores)', () => {
  const list = (scores: Record<string, number>, weight: number) => ({ items: Object.keys(scores).map((id) => ({ id, s: scores[id]! })), score: (x: { s: number }) => x.s, weight });

  it("sums each list's score scaled by its best, weighted; a list without the item adds nothing", () => {
    const fused = scoreFusion([list({ a: 0.8, b: 0.4 }, 0.5), list({ b: 12, c: 6 }, 0.5)]);
    expect(fused.map((f) => [f.id, f.score])).toEqual([
      ['b', 0.5 * 0.5 + 0.5 * 1],
      ['a', 0.5],
      ['c', 0.25],
    ]);
    expect(fused[0]!.ranks).toEqual([2, 1]);
  });

  it('keeps how far apart scores are, which ranks lose', () => {
    // By rank, a and x tie (first in one list each); by score, x's list has a clear winner and a's does not.
    const fused = scoreFusion([list({ a: 0.61, y: 0.6 }, 0.5), list({ x: 20, z: 2 }, 0.5)]);
    expect(fused.map((f) => f.id)).toEqual(['a', 'x', 'y', 'z']);
    expect(fused[1]!.score).toBe(0.5);
    expect(fused[2]!.score).toBeCloseTo((0.5 * 0.6) / 0.61);
  });

  it('counts an item a list lacks at that list\'s last score when it stopped at its depth (`absent`), so a lone keyword match beats look-alikes', () => {
    // x is the only keyword match worth the name (BM25 10.8 against 0.7) but fell out of the vector list, whose
    // last (its depth) scored 0.9: near-duplicates a, b of similarity ~0.95 must not outrank it for that.
    const vector = list({ a: 0.95, b: 0.94, last: 0.9 }, 0.5);
    const keyword = list({ x: 10.8, a: 0.7, b: 0.7 }, 0.5);
    expect(scoreFusion([vector, keyword])[0]!.id).toBe('a');
    const fused = scoreFusion([{ ...vector, absent: 0.9 }, keyword]);
    expect(fused[0]!.id).toBe('x');
    expect(fused[0]!.score).toBeCloseTo((0.5 * 0.9) / 0.95 + 0.5);
    expect(fused[0]!.ranks).toEqual([undefined, 1]);
    // Both lists cut: a vector-only item gets the keyword list's last too.
    const both = scoreFusion([{ ...vector, absent: 0.9 }, { ...list({ x: 10.8, a: 2 }, 0.5), absent: 2 }]);
    expect(both.find((f) => f.id === 'last')!.score).toBeCloseTo((0.5 * 0.9) / 0.95 + (0.5 * 2) / 10.8);
  });

  it('ignores a list whose best score is not positive, and breaks ties by best rank, then id', () => {
    const fused = scoreFusion([list({ a: -0.2, b: -0.3 }, 0.5), list({ d: 1, c: 1 }, 0.5)]);
    // c and d tie at 0.5 and at best rank (1 and 2 in the same list): d ranked first there, so d; a and b tie at 0.
    expect(fused.map((f) => [f.id, f.score])).toEqual([
      ['d', 0.5],
      ['c', 0.5],
      ['a', 0],
      ['b', 0],
    ]);
  });
});

describe('reciprocal rank fusion', () => {
  it('sums 1/(k+rank) over the lists and orders by it', () => {
    const fused = reciprocalRankFusion([ids(['a', 'b', 'c']), ids(['c', 'a', 'd'])]);
    expect(fused.map((f) => f.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 2));
    expect(fused[0]!.ranks).toEqual([1, 2]);
    expect(fused.find((f) => f.id === 'd')!.ranks).toEqual([undefined, 3]);
  });

  it('breaks equal scores by best rank, then by id, whatever the input order', () => {
    // b and x both score 1/(k+2); y and a both 1/(k+1).
    const one = reciprocalRankFusion([ids(['y', 'b']), ids(['a', 'x'])]);
    const two = reciprocalRankFusion([ids(['a', 'x']), ids(['y', 'b'])]);
    expect(one.map((f) => f.id)).toEqual(['a', 'y', 'b', 'x']);
    expect(two.map((f) => f.id)).toEqual(['a', 'y', 'b', 'x']);
  });

  it('counts a duplicate within one list once, at its best rank', () => {
    const fused = reciprocalRankFusion([ids(['a', 'a', 'b'])]);
    expect(fused.map((f) => [f.id, f.ranks[0]])).toEqual([
      ['a', 1],
      ['b', 3],
    ]);
  });

  it('applies list weights and handles empty lists', () => {
    const fused = reciprocalRankFusion([ids(['a']), ids(['b']), []], { weights: [1, 2, 1] });
    expect(fused.map((f) => f.id)).toEqual(['b', 'a']);
    expect(reciprocalRankFusion([[], []])).toEqual([]);
  });
});

describe('builtin reranker scoring', () => {
  const unit = (...xs: number[]) => {
    const v = Float32Array.from(xs);
    const n = Math.hypot(...xs);
    return v.map((x) => x / n);
  };
  const q = unit(1, 0, 0);

  it('adds λ × the best window cosine to the first-stage score', () => {
    const { scores, windowScores } = builtinScores(
      q,
      [
        { firstStage: 1, windows: [{ start: 0, end: 5, vector: unit(0, 1, 0) }] },
        { firstStage: 0.5, windows: [{ start: 0, end: 5, vector: unit(0, 1, 0) }, { start: 6, end: 9, vector: unit(1, 0, 0) }] },
      ],
      { lambda: 1 },
    );
    expect(scores[0]).toBeCloseTo(1);
    expect(scores[1]).toBeCloseTo(1.5);
    expect(windowScores[1]).toEqual([expect.closeTo(0), expect.closeTo(1)]);
  });

  it('gives a chunk without windows the mean of the others, so it neither jumps nor sinks', () => {
    const { scores } = builtinScores(
      q,
      [
        { firstStage: 0, windows: [{ start: 0, end: 1, vector: unit(1, 0, 0) }] },
        { firstStage: 0, windows: [{ start: 0, end: 1, vector: unit(0, 1, 0) }] },
        { firstStage: 0, windows: undefined },
      ],
      { lambda: 2 },
    );
    expect(scores[2]).toBeCloseTo(1);
  });
});
