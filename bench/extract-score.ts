/**
 * Scores extracted text against a reference text (the known source of a generated PDF, or pdftotext's output).
 * Both sides are NFKC-folded and lower-cased and cut into word tokens (letters, digits and marks; each CJK
 * ideograph or kana is its own token), so punctuation and quote styles do not count.
 *
 * A "broken word" is measurable against the reference vocabulary:
 * - split: two neighbouring tokens of the extraction whose join is a reference word while at least one of the
 *   two is not ("in cluding", "W arranty");
 * - glued: a token that is not a reference word but is two or more reference words of ≥ 2 letters run together
 *   ("Ifyoudrive", "blacklistedloop").
 * Hyphens: a reference compound without its hyphens is a lost hyphen, not a glued word (see vocabulary), and
 * a hyphen next to a number never makes a split (see brokenWords).
 */

export interface Score {
  refWords: number;
  words: number;
  matched: number;
  split: number;
  glued: number;
  /** Tokens that are a reference compound run together without its hyphens (see vocabulary). */
  lostHyphens: number;
  refBigrams: number;
  matchedBigrams: number;
}

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]/u;

export function tokens(text: string): string[] {
  return located(text).tokens;
}

/** The tokens of `text` with where each starts and ends in `folded` (the NFKC-folded, lower-cased text). */
export function located(text: string): { folded: string; tokens: string[]; starts: number[]; ends: number[] } {
  const folded = text.normalize('NFKC').toLowerCase();
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const push = (t: string, at: number): void => {
    out.push(t);
    starts.push(at);
    ends.push(at + t.length);
  };
  for (const m of folded.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    if (CJK_CHAR.test(m[0])) {
      // Split CJK runs into single characters, keeping any Latin/digit stretches whole.
      let at = m.index;
      for (const part of m[0].match(/[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]|[^\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]+/gu) ?? []) {
        push(part, at);
        at += part.length;
      }
    } else {
      push(m[0], m.index);
    }
  }
  return { folded, tokens: out, starts, ends };
}

/**
 * The reference's words. Given the reference text too, its hyphenated compounds count also without their
 * hyphens ("irs-irbs" → "irsirbs", "2006-03" → "200603"): pdf.js drops every glyph a font maps to U+00AD (a
 * format character to it), which is how the IRS booklets draw their hyphens, so inside a line such a compound
 * comes out run together. That is a lost hyphen, counted apart (Score.lostHyphens), not a glued word: the words
 * are whole and in order. Only the reference's own compounds are added, so "ifyoudrive" stays glued.
 */
export function vocabulary(refTokens: string[], reference?: string): Set<string> {
  const vocab = new Set(refTokens);
  if (reference) for (const c of unhyphenated(reference)) vocab.add(c);
  return vocab;
}

function unhyphenated(reference: string): Set<string> {
  const out = new Set<string>();
  for (const m of reference.normalize('NFKC').toLowerCase().matchAll(/[\p{L}\p{N}]+(?:[-\u2010\u2011][\p{L}\p{N}]+)+/gu)) {
    out.add(m[0].replace(/[-\u2010\u2011]/g, ''));
  }
  return out;
}

/**
 * Indexes of split pairs (left token index) and glued tokens in `text`'s tokens. A hyphen next to a number is
 * the text's own, never a line-end word break, and pdftotext drops it at a line end ("4-phenyl-4-" +
 * "acetoxypiperidine" → "4acetoxypiperidine", "1950-" + "2003" → "19502003"); so two tokens joined by a hyphen
 * (and perhaps a line break) where one of them is a number are not a split word, nor is the second a glued one
 * when its join with that number is the reference's word. A hyphen between letters excuses nothing: "in-
 * cluding" is still split.
 */
export function brokenWords(text: string, vocab: Set<string>): { split: number[]; glued: number[] } {
  const { folded, tokens: toks, starts, ends } = located(text);
  const split: number[] = [];
  const glued: number[] = [];
  const numberHyphen = (i: number): boolean =>
    i >= 0 && i + 1 < toks.length && /^\s*[-\u2010\u2011]\s*$/.test(folded.slice(ends[i]!, starts[i + 1]!)) && (/\d$/.test(toks[i]!) || /^\d/.test(toks[i + 1]!));
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const next = toks[i + 1];
    if (next !== undefined && (!vocab.has(t) || !vocab.has(next)) && vocab.has(t + next) && !CJK_CHAR.test(t) && !numberHyphen(i)) split.push(i);
    if (!vocab.has(t) && t.length >= 4 && segments(t, vocab) >= 2 && !(numberHyphen(i - 1) && vocab.has(toks[i - 1]! + t))) glued.push(i);
  }
  return { split, glued };
}

/** Fewest reference words (each ≥ 2 characters) that `t` is made of, or 0 when it is not made of them. */
function segments(t: string, vocab: Set<string>): number {
  if (t.length > 60) return 0;
  const best: number[] = new Array<number>(t.length + 1).fill(Infinity);
  best[0] = 0;
  for (let end = 2; end <= t.length; end++) {
    for (let start = Math.max(0, end - 30); start <= end - 2; start++) {
      if (best[start]! + 1 < best[end]! && vocab.has(t.slice(start, end))) best[end] = best[start]! + 1;
    }
  }
  return Number.isFinite(best[t.length]!) ? best[t.length]! : 0;
}

function counts<T>(items: T[]): Map<T, number> {
  const m = new Map<T, number>();
  for (const x of items) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

function overlap<T>(a: Map<T, number>, b: Map<T, number>): number {
  let n = 0;
  for (const [k, v] of a) n += Math.min(v, b.get(k) ?? 0);
  return n;
}

const bigrams = (toks: string[]): string[] => toks.slice(1).map((t, i) => `${toks[i]} ${t}`);

/** `vocab` judges split and glued words; by default the reference's words and unhyphenated compounds. */
export function score(extracted: string, reference: string, vocab = vocabulary(tokens(reference), reference)): Score {
  const ref = tokens(reference);
  const ours = tokens(extracted);
  const strict = new Set(ref);
  const broken = brokenWords(extracted, vocab);
  return {
    refWords: ref.length,
    words: ours.length,
    matched: overlap(counts(ref), counts(ours)),
    split: broken.split.length,
    glued: broken.glued.length,
    lostHyphens: ours.filter((t) => !strict.has(t) && vocab.has(t) && t.length >= 4 && segments(t, strict) >= 2).length,
    refBigrams: Math.max(0, ref.length - 1),
    matchedBigrams: overlap(counts(bigrams(ref)), counts(bigrams(ours))),
  };
}

export function add(a: Score, b: Score): Score {
  return {
    refWords: a.refWords + b.refWords,
    words: a.words + b.words,
    matched: a.matched + b.matched,
    split: a.split + b.split,
    glued: a.glued + b.glued,
    lostHyphens: a.lostHyphens + b.lostHyphens,
    refBigrams: a.refBigrams + b.refBigrams,
    matchedBigrams: a.matchedBigrams + b.matchedBigrams,
  };
}

export const ZERO: Score = { refWords: 0, words: 0, matched: 0, split: 0, glued: 0, lostHyphens: 0, refBigrams: 0, matchedBigrams: 0 };

export const recall = (s: Score): number => (s.refWords ? s.matched / s.refWords : 1);
export const precision = (s: Score): number => (s.words ? s.matched / s.words : 1);
export const bigramOrder = (s: Score): number => (s.refBigrams ? s.matchedBigrams / s.refBigrams : 1);

/** Whether a chunk's text holds a broken word by the definition above. */
export function hasBrokenWord(text: string, vocab: Set<string>): boolean {
  const b = brokenWords(text, vocab);
  return b.split.length + b.glued.length > 0;
}

/** Each split or glued word of `text` with the words around it, for reading what the counts are made of. */
export function brokenOccurrences(text: string, vocab: Set<string>): string[] {
  const { folded, tokens: toks, starts, ends } = located(text);
  const b = brokenWords(text, vocab);
  const around = (first: number, last: number): string => {
    const from = starts[Math.max(0, first - 4)]!;
    const to = ends[Math.min(toks.length - 1, last + 4)]!;
    return folded.slice(from, to).replace(/\s+/g, ' ');
  };
  return [
    ...b.split.map((i) => `split "${folded.slice(starts[i]!, ends[i + 1]!)}" in: ${around(i, i + 1)}`),
    ...b.glued.map((i) => `glued "${toks[i]}" in: ${around(i, i)}`),
  ];
}

/** Reference words the extraction lacks (multiset difference), most frequent first. */
export function missedWords(extracted: string, reference: string): [string, number][] {
  const ours = counts(tokens(extracted));
  const out: [string, number][] = [];
  for (const [w, n] of counts(tokens(reference))) {
    const lost = n - (ours.get(w) ?? 0);
    if (lost > 0) out.push([w, lost]);
  }
  return out.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** A line that is only a page number: "3", "-3-", "— iv —", "Page 3", "Page 3 of 9", "3 / 9", "3 of 9". */
const PAGE_NUMBER_LINE = /^\s*(page\s*)?[-–—]?\s*(\d{1,4}|[ivxlc]{1,7})\s*[-–—]?\s*((of|\/)\s*\d{1,4})?\s*$/i;

/**
 * pdftotext's plain output without the page furniture it keeps (the parser drops it on purpose, issue #11).
 * Written here independently of the parser, on pdftotext's pages (form feeds) and lines: among a page's first
 * and last three non-empty lines, a line that is a page-number form, or whose text with every digit run read as
 * "#" stands at the edge of three or more pages of the document. A line set by the page template ("26 FREE
 * CULTURE", "Page 12 of 206 fileid: i1040gi/2023/a/xml/cycle08/source") recurs at the edges; body text, which
 * flows, almost never repeats whole at an edge three times. Returns the text and how many lines were dropped.
 */
export function withoutFurniture(reference: string): { text: string; dropped: number } {
  const pages = reference.split('\f').map((p) => p.split('\n'));
  const key = (line: string): string => line.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
  const edges = pages.map((lines) => {
    const filled = lines.map((l, i) => [l, i] as const).filter(([l]) => l.trim());
    return new Set([...filled.slice(0, 3), ...filled.slice(-3)].map(([, i]) => i));
  });
  const seen = new Map<string, number>();
  pages.forEach((lines, p) => {
    for (const k of new Set([...edges[p]!].map((i) => key(lines[i]!)))) seen.set(k, (seen.get(k) ?? 0) + 1);
  });
  let dropped = 0;
  const text = pages
    .map((lines, p) =>
      lines
        .filter((line, i) => {
          if (!edges[p]!.has(i)) return true;
          const furniture = PAGE_NUMBER_LINE.test(line) || (seen.get(key(line)) ?? 0) >= 3;
          if (furniture) dropped++;
          return !furniture;
        })
        .join('\n'),
    )
    .join('\f');
  return { text, dropped };
}
