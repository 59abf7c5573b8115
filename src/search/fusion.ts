/**
 * Two ways to fuse ranked lists, both ending in the same deterministic order (ties broken by the best rank a
 * candidate reached in any list, then by id):
 *
 * - reciprocal rank fusion (Cormack et al., SIGIR 2009): score(d) = Σ_lists weight / (k + rank_d), rank from 1.
 *   Rank-based, so BM25 and cosine scales never need calibrating against each other.
 * - a convex combination of scores (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS
 *   2023): score(d) = Σ_lists weight · score_d / max score of the list. Each list is scaled by its own best, so it
 *   is as free of calibration, and it keeps how far apart the scores are, which ranks throw away: on SciFact train
 *   it beats every RRF setting tried (docs/search.md). Where a list lacks d it adds 0 — unless the list stopped at
 *   its depth (`absent`): then d may well have scored just under its last, and counting 0 lets a lone, overwhelming
 *   match in the other list lose to near-duplicates that list ranked (a code query whose record's vector fell out
 *   of the vector list after a re-embedding, docs/search.md#fusion).
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
  return fuse(lists, (li, _item, i) => (opts.weights?.[li] ?? 1) / (k + i + 1));
}

/**
 * Convex combination of max-normalised scores; `score` reads an item's score in its list (higher is better), and
 * `absent`, when given, is what an item the list lacks counts as (the list's last score, when it stopped at its
 * depth). A list whose best score is not positive contributes nothing.
 */
export function scoreFusion<T extends Ranked>(
  lists: readonly { items: readonly T[]; score: (item: T) => number; weight: number; absent?: number }[],
): FusedCandidate<T>[] {
  const tops = lists.map((list) => list.items.reduce((m, item) => Math.max(m, list.score(item)), -Infinity));
  const part = (li: number, score: number) => (tops[li]! > 0 ? (lists[li]!.weight * score) / tops[li]! : 0);
  const fused = fuse(
    lists.map((l) => l.items),
    (li, item) => part(li, lists[li]!.score(item)),
  );
  if (lists.every((l) => l.absent === undefined)) return fused;
  for (const c of fused) {
    c.ranks.forEach((rank, li) => {
      const absent = lists[li]!.absent;
      if (rank === undefined && absent !== undefined) c.score += part(li, absent);
    });
  }
  return fused.sort(compareFused);
}

/** Sums each candidate's `contribution` over the lists (a duplicate within one list counts once, at its best rank). */
function fuse<T extends Ranked>(lists: readonly (readonly T[])[], contribution: (list: number, item: T, index: number) => number): FusedCandidate<T>[] {
  const byId = new Map<string, FusedCandidate<T>>();
  lists.forEach((list, li) => {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) return;
      seen.add(item.id);
      let c = byId.get(item.id);
      if (!c) {
        c = { id: item.id, score: 0, ranks: lists.map(() => undefined), item };
        byId.set(item.id, c);
      }
      c.ranks[li] = i + 1;
      c.score += contribution(li, item, i);
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
