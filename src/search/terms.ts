/**
 * Query terms: what keyword search is asked for and what highlights mark. The user's text is reduced
 * to word tokens (letters and digits of any script), so no character of it ever reaches a query
 * language — LanceDB's full-text search sees plain space-separated words.
 */
import { UNSPACED } from '../language/scripts.js';

/** Common English function words: they match everywhere, so they neither retrieve nor highlight. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too us was we were ' +
    'what when where which while who whom why will with would you your'
  ).split(' '),
);

// Marks (\p{M}) belong to their word: Thai and Devanagari vowel signs, Arabic harakat, combining accents.
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)?/gu;

export interface Term {
  /** Lowercased surface form. */
  text: string;
  /** Light stem for matching word variants (plural, -ed, -ing). */
  stem: string;
}

/**
 * Strips the commonest English inflections; good enough to match "cells" to "cell", not a real stemmer. A final "e" goes
 * too, so that a word and its inflections meet ("fridge", "fridges"; "charge", "charged"), and "ss" keeps its "s".
 */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length <= 3) return w;
  for (const suffix of ['ies', 'ing', 'ed', 'es', 's']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3 && !(suffix === 's' && w.endsWith('ss'))) {
      w = suffix === 'ies' ? `${w.slice(0, -3)}y` : w.slice(0, -suffix.length);
      break;
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** The word tokens of `text` with their [start, end) offsets. */
export function wordSpans(text: string): { word: string; start: number; end: number }[] {
  const out: { word: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(WORD)) out.push({ word: m[0], start: m.index, end: m.index + m[0].length });
  return out;
}

/** A word of a text that is one of a query's terms: where it lies, and the term it is (its light stem). */
export interface TermMatch {
  start: number;
  end: number;
  key: string;
}

/**
 * Finds the words of texts that are one of `terms`, by surface form or light stem. A search makes one: a shown chunk's
 * answer (answer.ts) and highlights (highlights.ts) read the same matches, found once per text (each pass over a
 * chunk's words was a visible share of a search's main thread).
 */
export class TermMatcher {
  private readonly exact: ReadonlySet<string>;
  private readonly stems: ReadonlySet<string>;
  private readonly found = new Map<string, TermMatch[]>();
  /**
   * The terms of unspaced scripts (CJK, Thai …; Korean, whose particles join the word), which may sit inside a longer
   * run: highlights look for them inside words (found once, not for every word of every shown passage). A term of a
   * spaced script (Cyrillic, Greek, Arabic …) is a whole word: "он" is not marked inside "Телефон".
   */
  readonly inner: readonly string[];

  constructor(readonly terms: readonly Term[]) {
    this.exact = new Set(terms.map((t) => t.text));
    this.stems = new Set(terms.map((t) => t.stem));
    this.inner = [...this.exact].filter((t) => t.length >= 2 && UNSPACED.test(t));
  }

  /** How many distinct terms (by stem) the query has. */
  get count(): number {
    return this.stems.size;
  }

  /** The words of `text` that are one of the terms, in text order; `key` is the term's stem. */
  find(text: string): TermMatch[] {
    let out = this.found.get(text);
    if (!out) {
      out = [];
      if (this.stems.size > 0) {
        for (const m of text.matchAll(WORD)) {
          const w = m[0].toLowerCase();
          const s = stem(w);
          if (this.exact.has(w) || this.stems.has(s)) out.push({ start: m.index, end: m.index + m[0].length, key: s });
        }
      }
      this.found.set(text, out);
    }
    return out;
  }
}

/** Distinct content terms of a query, in first-seen order, stop words dropped. */
export function queryTerms(query: string): Term[] {
  const seen = new Set<string>();
  const out: Term[] = [];
  for (const { word } of wordSpans(query)) {
    const text = word.toLowerCase();
    if (STOP_WORDS.has(text) || seen.has(text)) continue;
    if (text.length < 2 && !UNSPACED.test(text) && !/\p{N}/u.test(text)) continue;
    seen.add(text);
    out.push({ text, stem: stem(text) });
  }
  return out;
}

/** The keyword-search input for a query: its terms joined by spaces (empty when it has none). */
export function keywordQuery(query: string, maxTerms = 64): string {
  return queryTerms(query)
    .slice(0, maxTerms)
    .map((t) => t.text)
    .join(' ');
}
