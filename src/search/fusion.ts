/**
 * Reciprocal rank fusion (Cormack et al., SIGIR 2009): score(d) = Σ_lists weight / (k + rank_d), rank
 * from 1. Rank-based, so BM25 and cosine scales never need calibrating against each other. Ties are
 * broken by the best rank a candidate reached in any list, then by id, so equal inputs always give
 * the same order.
 */

export interface Ranked {
  id: string;
}

export interface FusedCandidate<T extends Ranked> {
  id: string;
  /** The fused score (higher is better). */
  score: number;
  /** 1-based rank in each input list, or undefined where the list did not contain it. */
  ranks: (number | undefined)[];
  /** The item as first seen (earlier lists win), carrying whatever the retrievers returned. */
  item: T;
}

export const RRF_K = 60;

export function reciprocalRankFusion<T extends Ranked>(
  lists: readonly (readonly T[])[],
  opts: { k?: number; weights?: readonly number[] } = {},
): FusedCandidate<T>[] {
  const k = opts.k ?? RRF_K;
  const byId = new Map<string, FusedCandidate<T>>();
  lists.forEach((list, li) => {
    const weight = opts.weights?.[li] ?? 1;
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) return; // a duplicate within one list counts once, at its best rank
      seen.add(item.id);
      let c = byId.get(item.id);
      if (!c) {
        c = { id: item.id, score: 0, ranks: lists.map(() => undefined), item };
        byId.set(item.id, c);
      }
      c.ranks[li] = i + 1;
      c.score += weight / (k + i + 1);
    });
  });
  return [...byId.values()].sort(compareFused);
}

const bestRank = (ranks: (number | undefined)[]): number => Math.min(...ranks.map((r) => r ?? Infinity));

function compareFused<T extends Ranked>(a: FusedCandidate<T>, b: FusedCandidate<T>): number {
  return b.score - a.score || bestRank(a.ranks) - bestRank(b.ranks) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Sorts by score descending, ties by id ascending: the one deterministic order every stage ends in. */
export function byScoreThenId<U extends { id: string; score: number }>(a: U, b: U): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
