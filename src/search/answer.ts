/**
 * A result's answer: the sentence (or short run of sentences) of its chunk that best matches the query, which the
 * web, the CLI and MCP show first. Units are the chunk's sentence windows (sentence-windows.ts); one longer than
 * MAX_UNIT_CHARS (a list or table without sentence punctuation, which would otherwise be the whole chunk) is cut at
 * line breaks, then at word boundaries, so an answer is always something a person reads at a glance.
 *
 * A unit's score is its meaning (cosine to the query, when the search could embed the units: answer-meaning.ts, or
 * the builtin reranker's stored windows) plus TERM_WEIGHT × how far the share of the query's distinct terms it holds
 * is past half (0 at half or less, 1 with them all). Without meaning the terms decide, then how often they occur, then
 * the earlier unit. TERM_WEIGHT was chosen on SciFact train's rationale sentences (`npm run bench:snippets -- --tune`;
 * docs/search.md).
 */
import { type SentenceWindow, sentenceWindows } from './sentence-windows.js';
import { stem, type Term, wordSpans } from './terms.js';

/** A unit longer than this is cut (at line breaks, then words) into pieces of at most UNIT_PIECE_CHARS. */
export const MAX_UNIT_CHARS = 400;
const UNIT_PIECE_CHARS = 300;

/** Weight of the query-term share against the cosine (0..1) of meaning. */
export const TERM_WEIGHT = 0.5;

/** The units an answer is chosen among, in text order, covering every sentence of `text`. */
export function answerUnits(text: string): SentenceWindow[] {
  return sentenceWindows(text).flatMap((w) => (w.end - w.start <= MAX_UNIT_CHARS ? [w] : cutUnit(text, w)));
}

/** An overlong unit in pieces: its lines, and a line still too long at word boundaries into near-equal parts. */
function cutUnit(text: string, w: SentenceWindow): SentenceWindow[] {
  const out: SentenceWindow[] = [];
  for (const m of text.slice(w.start, w.end).matchAll(/[^\n]+/g)) {
    const start = w.start + m.index + (m[0].length - m[0].trimStart().length);
    const end = w.start + m.index + m[0].trimEnd().length;
    if (end <= start) continue;
    if (end - start <= MAX_UNIT_CHARS) out.push({ start, end });
    else out.push(...wordPieces(text, start, end));
  }
  return out;
}

function wordPieces(text: string, start: number, end: number): SentenceWindow[] {
  const parts = Math.ceil((end - start) / UNIT_PIECE_CHARS);
  const target = (end - start) / parts;
  const out: SentenceWindow[] = [];
  let open = start;
  for (const m of text.slice(start, end).matchAll(/\s+/g)) {
    const at = start + m.index;
    if (at - open >= target && end - at > target / 3) {
      out.push({ start: open, end: at });
      open = at + m[0].length;
    }
  }
  out.push({ start: open, end });
  return out;
}

export interface AnswerChoice {
  unit: SentenceWindow;
  /** Its index among the units. */
  index: number;
}

/**
 * The unit that answers best. `meaning` (one cosine per unit, or absent) comes from the model; terms are the
 * query's. Undefined only when the text has no units (it is blank).
 */
export function chooseAnswer(text: string, units: readonly SentenceWindow[], terms: readonly Term[], meaning?: readonly number[]): AnswerChoice | undefined {
  if (units.length === 0) return undefined;
  const stems = new Set(terms.map((t) => t.stem));
  const exact = new Set(terms.map((t) => t.text));
  const found = units.map(() => ({ distinct: new Set<string>(), hits: 0 }));
  if (stems.size > 0) {
    let u = 0;
    for (const { word, start } of wordSpans(text)) {
      while (u < units.length && start >= units[u]!.end) u++;
      if (u === units.length) break;
      if (start < units[u]!.start) continue;
      const w = word.toLowerCase();
      const s = stem(w);
      if (exact.has(w) || stems.has(s)) {
        found[u]!.distinct.add(s);
        found[u]!.hits++;
      }
    }
  }
  const withMeaning = meaning !== undefined && meaning.length === units.length;
  let best = 0;
  let bestKey = [-Infinity, -Infinity];
  units.forEach((_, i) => {
    const share = stems.size ? found[i]!.distinct.size / stems.size : 0;
    // With meaning, only a unit holding more than half the query's words gains by them: a word or two in common is
    // what filler around an answer has too (an office handbook says "office" everywhere), and it outweighed meaning.
    const key = withMeaning ? [meaning[i]! + TERM_WEIGHT * Math.max(0, 2 * share - 1), 0] : [share, found[i]!.hits];
    if (key[0]! > bestKey[0]! || (key[0] === bestKey[0] && key[1]! > bestKey[1]!)) {
      best = i;
      bestKey = key;
    }
  });
  return { unit: units[best]!, index: best };
}

/**
 * Meaning scores for `units` from windows scored elsewhere (the builtin reranker's stored windows): each unit takes
 * the score of the window it lies in. Undefined when some unit lies in none (the windows were cut differently).
 */
export function scoresFromWindows(units: readonly SentenceWindow[], windows: readonly { start: number; end: number; score: number }[]): number[] | undefined {
  const out: number[] = [];
  for (const u of units) {
    const w = windows.find((x) => u.start >= x.start && u.end <= x.end);
    if (!w) return undefined;
    out.push(w.score);
  }
  return out;
}
