/**
 * The excerpt of a search result people read: the result's answer (its `snippet`, the sentence that best matches the
 * query) first and whole, then what follows it, up to EXCERPT_CHARS and cut at a word boundary. The CLI's search
 * output and the web page's result snippet both take it from here, so the two show the same window of the same hit.
 */
import { graphemeAfter, graphemeBefore } from './code-points.js';

/** A [start, end) range of UTF-16 units, as the search API's highlights are. */
export type TextRange = [number, number];

export const EXCERPT_CHARS = 320;

export interface Excerpt {
  /** Where the excerpt starts and ends in the text ([0, text.length] when the whole text fits). */
  start: number;
  end: number;
  /** The answer it opens with, undefined when there is none. */
  passage: TextRange | undefined;
}

/**
 * The widest of a result's highlights: the service marks its answer as one range and the query's words outside it as
 * word ranges. For a server that sends no `snippet`.
 */
export function bestPassage(highlights: readonly TextRange[]): TextRange | undefined {
  return highlights.reduce<TextRange | undefined>((best, r) => (!best || r[1] - r[0] > best[1] - best[0] ? r : best), undefined);
}

/** Where a result's answer lies in its text: its `snippet` found in it, else the widest highlight (older servers). */
export function answerRange(text: string, snippet: string | undefined, highlights: readonly TextRange[]): TextRange | undefined {
  const at = snippet ? text.indexOf(snippet) : -1;
  return at >= 0 ? [at, at + snippet!.length] : bestPassage(highlights);
}

/** Moves `i` back (or forward) to a word boundary, at most 30 characters, so words are not cut. */
function snap(text: string, i: number, dir: -1 | 1): number {
  for (let k = 0; k < 30; k++) {
    const j = i + dir * k;
    if (j <= 0 || j >= text.length) return Math.max(0, Math.min(text.length, j));
    if (/\s/.test(text[j]!)) return dir === 1 ? j + 1 : j;
  }
  // No space near: between graphemes (a cut inside one shows a letter without its accent, half a family emoji).
  return dir === 1 ? graphemeAfter(text, i) : graphemeBefore(text, i);
}

/**
 * The [start, end) window of `text` that opens with `answer` and holds it whole (however long), followed by as much
 * of what comes after as `max` characters allow. A text of at most `max` characters is shown whole; without an
 * answer, its first `max` characters.
 */
export function excerptRange(text: string, answer: TextRange | undefined, max = EXCERPT_CHARS): TextRange {
  if (text.length <= max) return [0, text.length];
  const [as, ae] = answer ?? [0, 0];
  const limit = Math.max(ae, as + max);
  if (limit >= text.length) return [as, text.length];
  return [as, Math.max(ae, snap(text, limit, -1))];
}

/** The excerpt of a result whose text is `text`, answer `snippet` and highlights (from the search API) `highlights`. */
export function excerpt(text: string, snippet: string | undefined, highlights: readonly TextRange[], max = EXCERPT_CHARS): Excerpt {
  const passage = answerRange(text, snippet, highlights);
  const [start, end] = excerptRange(text, passage, max);
  return { start, end, passage };
}
