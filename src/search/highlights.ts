/**
 * Highlights of one result: sorted, non-overlapping [start, end) UTF-16 ranges into the result's
 * `text`. Its answer (answer.ts) comes as one range, and query-term occurrences outside it as word ranges.
 */
import { eachAnalysedWord } from '../language/analyse.js';
import type { SentenceWindow } from '../ingest/sentence-windows.js';
import { stem, type Term, wordSpans } from './terms.js';

export type Range = [number, number];

/**
 * A query's keyword forms (language/analyse.ts) and the language of the text they are looked for in: a word of the
 * text whose forms in its language meet the query's is marked ("Fahrrädern" for "Fahrrad", "книгу" for "книга",
 * 图书馆 as jieba cut it).
 */
export interface QueryFormsIn {
  forms: ReadonlySet<string>;
  language: string | null;
}

/**
 * Word ranges in `text` whose word (or its stem) is one of `terms`, or whose forms meet the query's `analysed` forms.
 * Ranges may overlap (mergeRanges joins them).
 */
export function termRanges(text: string, terms: Term[], analysed?: QueryFormsIn): Range[] {
  const out = analysed && analysed.forms.size > 0 ? analysedRanges(text, analysed) : [];
  return terms.length === 0 ? out : [...termRangesTyped(text, terms), ...out];
}

function analysedRanges(text: string, analysed: QueryFormsIn): Range[] {
  const out: Range[] = [];
  const { forms } = analysed;
  eachAnalysedWord(text, analysed.language, (start, end, wordForms) => {
    for (const f of wordForms) {
      if (forms.has(f)) {
        out.push([start, end]);
        return;
      }
    }
  });
  return out;
}

function termRangesTyped(text: string, terms: Term[]): Range[] {
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

/** The answer's range (answer.ts) and the query terms' ranges, merged. */
export function highlights(text: string, answer: SentenceWindow | undefined, terms: Term[], analysed?: QueryFormsIn): Range[] {
  const ranges = termRanges(text, terms, analysed);
  return mergeRanges(answer ? [[answer.start, answer.end], ...ranges] : ranges);
}
