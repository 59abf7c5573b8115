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
 */

export interface Score {
  refWords: number;
  words: number;
  matched: number;
  split: number;
  glued: number;
  refBigrams: number;
  matchedBigrams: number;
}

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]/u;

export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize('NFKC').toLowerCase().matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    if (CJK_CHAR.test(m[0])) {
      // Split CJK runs into single characters, keeping any Latin/digit stretches whole.
      for (const part of m[0].match(/[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]|[^\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u{20000}-\u{3134f}]+/gu) ?? []) out.push(part);
    } else {
      out.push(m[0]);
    }
  }
  return out;
}

export function vocabulary(refTokens: string[]): Set<string> {
  return new Set(refTokens);
}

/** Indexes of split pairs (left token index) and glued tokens in `toks`. */
export function brokenWords(toks: string[], vocab: Set<string>): { split: number[]; glued: number[] } {
  const split: number[] = [];
  const glued: number[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const next = toks[i + 1];
    if (next !== undefined && (!vocab.has(t) || !vocab.has(next)) && vocab.has(t + next) && !CJK_CHAR.test(t)) split.push(i);
    if (!vocab.has(t) && t.length >= 4 && segments(t, vocab) >= 2) glued.push(i);
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

export function score(extracted: string, reference: string): Score {
  const ref = tokens(reference);
  const ours = tokens(extracted);
  const vocab = vocabulary(ref);
  const broken = brokenWords(ours, vocab);
  return {
    refWords: ref.length,
    words: ours.length,
    matched: overlap(counts(ref), counts(ours)),
    split: broken.split.length,
    glued: broken.glued.length,
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
    refBigrams: a.refBigrams + b.refBigrams,
    matchedBigrams: a.matchedBigrams + b.matchedBigrams,
  };
}

export const ZERO: Score = { refWords: 0, words: 0, matched: 0, split: 0, glued: 0, refBigrams: 0, matchedBigrams: 0 };

export const recall = (s: Score): number => (s.refWords ? s.matched / s.refWords : 1);
export const precision = (s: Score): number => (s.words ? s.matched / s.words : 1);
export const bigramOrder = (s: Score): number => (s.refBigrams ? s.matchedBigrams / s.refBigrams : 1);

/** Whether a chunk's text holds a broken word by the definition above. */
export function hasBrokenWord(text: string, vocab: Set<string>): boolean {
  const b = brokenWords(tokens(text), vocab);
  return b.split.length + b.glued.length > 0;
}
