/**
 * Which results of a search's whole list one page shows. Pages are cut by what was shown before, not by an
 * offset: the cursor carries the fingerprints of every result shown so far (cursor.ts), and a page is the
 * first `limit` results of the list not among them. The list is recomputed for every page; when the library
 * changed in between and near-ties swapped places, a result that moved down is not shown twice and one that
 * moved up is not skipped.
 */
import { fingerprint } from './cursor.js';

export interface PageCut {
  /** Indexes into the list of this page's results, in list order. */
  at: number[];
  /** 0-based position of the page's first result in the whole list (how many were shown before). */
  start: number;
  /** Fingerprints for the next page's cursor, or null when this page shows the last results. */
  next: number[] | null;
  /** Fingerprints for the previous page's cursor (the pages before it), or null on the first page. */
  previous: number[] | null;
}

export function cutPage(ids: readonly string[], shown: readonly number[], limit: number): PageCut {
  const seen = new Set(shown);
  const prints = ids.map(fingerprint);
  const unseen = prints.flatMap((p, i) => (seen.has(p) ? [] : [i]));
  const at = unseen.slice(0, limit);
  const start = shown.length;
  return {
    at,
    start,
    next: unseen.length > at.length ? [...shown, ...at.map((i) => prints[i]!)] : null,
    previous: start > 0 ? shown.slice(0, Math.max(0, start - limit)) : null,
  };
}
