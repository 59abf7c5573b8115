/**
 * Highlights of one result: sorted, non-overlapping [start, end) UTF-16 ranges into the result's
 * `text`. Its answer (answer.ts) comes as one range, and query-term occurrences outside it as word ranges.
 */
import { graphemeAfter, graphemeBefore } from '../core/code-points.js';
import { eachAnalysedWord } from '../language/analyse.js';
import type { SentenceWindow } from '../ingest/sentence-windows.js';
import { type Term, TermMatcher, wordSpans } from './terms.js';

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
 * Word ranges in `text` whose word (or its stem) is one of `terms` (a search's matcher, whose matches its answers
 * read too), or whose forms meet the query's `analysed` forms. Ranges may overlap (mergeRanges joins them). Each
 * holds whole graphemes: a term found inside a run (Thai สว in สวัสดี, whose ว takes the vowel after it) or a word
 * opening with a stray combining mark takes the rest of the grapheme it would split.
 */
export function termRanges(text: string, terms: readonly Term[] | TermMatcher, analysed?: QueryFormsIn): Range[] {
  const out = analysed && analysed.forms.size > 0 ? analysedRanges(text, analysed) : [];
  const matcher = terms instanceof TermMatcher ? terms : new TermMatcher(terms);
  const ranges = matcher.count === 0 ? out : [...termRangesTyped(text, matcher), ...out];
  return ranges.map(([s, e]) => [graphemeBefore(text, s), graphemeAfter(text, e)]);
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

function termRangesTyped(text: string, matcher: TermMatcher): Range[] {
  const out: Range[] = matcher.find(text).map((m) => [m.start, m.end]);
  const { inner } = matcher;
  if (inner.length === 0) return out;
  const matched = new Set(out.map(([start]) => start));
  for (const { word, start } of wordSpans(text)) {
    if (matched.has(start)) continue;
    const { lower, at } = lowerWithOffsets(word);
    const offset = (i: number) => start + (at ? at[i]! : i);
    for (const t of inner) {
      for (let i = lower.indexOf(t); i >= 0; i = lower.indexOf(t, i + t.length)) out.push([offset(i), offset(i + t.length)]);
    }
  }
  return out;
}

/**
 * `word` lower-cased, and where a letter changed length when lower-cased ('İ' becomes two code units), for each offset
 * of the result the offset in `word` it came from (a match's offsets must stay the text's); none when none did.
 */
function lowerWithOffsets(word: string): { lower: string; at?: number[] } {
  const lower = word.toLowerCase();
  if (lower.length === word.length) return { lower };
  let out = '';
  const at: number[] = [];
  for (let i = 0; i < word.length; ) {
    const ch = String.fromCodePoint(word.codePointAt(i)!);
    const lc = ch.toLowerCase();
    for (let k = 0; k < lc.length; k++) at.push(i);
    out += lc;
    i += ch.length;
  }
  at.push(word.length);
  return { lower: out, at };
}

/** Merges ranges into sorted, non-overlapping ones (ranges that touch are joined). */
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

/**
 * The answer's range (answer.ts), whole, and the query terms' ranges outside it: the snippet's range is one of the
 * highlights, even where a term touches it or runs across its edge (unbroken CJK text).
 */
export function highlights(text: string, answer: SentenceWindow | undefined, terms: readonly Term[] | TermMatcher, analysed?: QueryFormsIn): Range[] {
  const ranges = termRanges(text, terms, analysed);
  if (!answer) return mergeRanges(ranges);
  const outside = mergeRanges(ranges.flatMap(([s, e]): Range[] => [[s, Math.min(e, answer.start)], [Math.max(s, answer.end), e]]));
  return [...outside, [answer.start, answer.end] as Range].sort((a, b) => a[0] - b[0]);
}
