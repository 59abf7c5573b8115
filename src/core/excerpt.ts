/**
 * The excerpt of a search result people read: at most EXCERPT_CHARS of the chunk, centred on its best passage and
 * cut at word boundaries. The CLI's search output and the web page's result snippet both take it from here, so the
 * two show the same window of the same hit.
 */

/** A [start, end) range of UTF-16 units, as the search API's highlights are. */
export type TextRange = [number, number];

export const EXCERPT_CHARS = 320;

export interface Excerpt {
  /** Where the excerpt starts and ends in the text ([0, text.length] when the whole text fits). */
  start: number;
  end: number;
  /** The passage it is centred on: the result's widest highlight, undefined when it has none. */
  passage: TextRange | undefined;
}

/**
 * The best passage among a result's highlights: the widest. The service marks its best-matching sentence window
 * as one range and the query's words outside it as word ranges.
 */
export function bestPassage(highlights: readonly TextRange[]): TextRange | undefined {
  return highlights.reduce<TextRange | undefined>((best, r) => (!best || r[1] - r[0] > best[1] - best[0] ? r : best), undefined);
}

/** Moves `i` back (or forward) to a word boundary, at most 30 characters, so words are not cut. */
function snap(text: string, i: number, dir: -1 | 1): number {
  for (let k = 0; k < 30; k++) {
    const j = i + dir * k;
    if (j <= 0 || j >= text.length) return Math.max(0, Math.min(text.length, j));
    if (/\s/.test(text[j]!)) return dir === 1 ? j + 1 : j;
  }
  return i;
}

/** The [start, end) window of `text` centred on `passage`, at most `max` characters; a longer passage is cut. */
export function excerptRange(text: string, passage: TextRange | undefined, max = EXCERPT_CHARS): TextRange {
  if (text.length <= max) return [0, text.length];
  const [ps, pe] = passage ?? [0, 0];
  if (pe - ps >= max) return [ps, snap(text, ps + max, -1)];
  const room = max - (pe - ps);
  let start = Math.max(0, ps - Math.floor(room / 2));
  const end = Math.min(text.length, start + max);
  start = Math.max(0, end - max);
  return [start === 0 ? 0 : snap(text, start, 1), end === text.length ? end : snap(text, end, -1)];
}

/** The excerpt of a result whose text is `text` and whose highlights (from the search API) are `highlights`. */
export function excerpt(text: string, highlights: readonly TextRange[], max = EXCERPT_CHARS): Excerpt {
  const passage = bestPassage(highlights);
  const [start, end] = excerptRange(text, passage, max);
  return { start, end, passage };
}
