/**
 * Highlights of one result: sorted, non-overlapping [start, end) UTF-16 ranges into the result's
 * `text`. The best-matching sentence window comes as one range (by the reranker's window scores when
 * it had them, else by query-term overlap), and query-term occurrences outside it as word ranges.
 */
import type { SentenceWindow } from './sentence-windows.js';
import { stem, type Term, wordSpans } from './terms.js';

export type Range = [number, number];

/** Word ranges in `text` whose word (or its stem) is one of `terms`. */
export function termRanges(text: string, terms: Term[]): Range[] {
  if (terms.length === 0) return [];
  const exact = new Set(terms.map((t) => t.text));
  const stems = new Set(terms.map((t) => t.stem));
  // Unspaced scripts (CJK): such a term may sit inside a longer run. Picked once, not per word: testing every term
  // against this regex for every word of every shown passage was a visible share of a search's main thread.
  const inner = [...exact].filter((t) => t.length >= 2 && /[^\p{Script=Latin}\p{N}]/u.test(t));
  const out: Range[] = [];
  for (const { word, start, end } of wordSpans(text)) {
    const w = word.toLowerCase();
    if (exact.has(w) || stems.has(stem(w))) out.push([start, end]);
    else {
      for (const t of inner) {
        for (let i = w.indexOf(t); i >= 0; i = w.indexOf(t, i + t.length)) out.push([start + i, start + i + t.length]);
      }
    }
  }
  return out;
}

/**
 * The window to highlight: the one with the highest `windowScores` entry when given, else the one
 * with the most distinct query terms (ties: earliest). Undefined when nothing matches at all.
 */
export function bestWindow(
  text: string,
  windows: SentenceWindow[],
  terms: Term[],
  windowScores?: number[],
): SentenceWindow | undefined {
  return pickWindow(text, windows, windowScores, () => termRanges(text, terms));
}

/**
 * `bestWindow` given the text's term ranges (asked for only without window scores). The ranges are found once for the
 * whole text rather than again in each window: windows are whole sentences, so no word straddles two.
 */
function pickWindow(text: string, windows: SentenceWindow[], windowScores: number[] | undefined, termRangesOfText: () => Range[]): SentenceWindow | undefined {
  if (windows.length === 0) return undefined;
  if (windowScores && windowScores.length === windows.length) {
    let best = 0;
    for (let i = 1; i < windows.length; i++) if (windowScores[i]! > windowScores[best]!) best = i;
    return windows[best];
  }
  const ranges = termRangesOfText();
  let best: SentenceWindow | undefined;
  let bestCount = 0;
  for (const w of windows) {
    const found = new Set<string>();
    for (const [s, e] of ranges) if (s >= w.start && e <= w.end) found.add(stem(text.slice(s, e).toLowerCase()));
    if (found.size > bestCount) {
      best = w;
      bestCount = found.size;
    }
  }
  return best;
}

/** Merges the sentence range and the term ranges into sorted, non-overlapping ranges. */
export function mergeRanges(ranges: Range[]): Range[] {
  const sorted = ranges.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

export function highlights(text: string, windows: SentenceWindow[], terms: Term[], windowScores?: number[]): Range[] {
  const ranges = termRanges(text, terms);
  const sentence = pickWindow(text, windows, windowScores, () => ranges);
  return mergeRanges(sentence ? [[sentence.start, sentence.end], ...ranges] : ranges);
}
