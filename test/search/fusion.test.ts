import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion, RRF_K } from '../../src/search/fusion.js';
import { builtinScores } from '../../src/search/rerank/builtin.js';

const ids = (xs: string[]) => xs.map((id) => ({ id }));

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
