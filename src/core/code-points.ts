/**
 * Offsets into UTF-16 text that never fall between the two halves of a surrogate pair (an emoji, a rare CJK
 * character): a cut there leaves a lone half, which strict UTF-8 decoders refuse or show as U+FFFD. And offsets that
 * fall between graphemes (what a reader sees as one character: a letter with its combining marks, an emoji ZWJ
 * sequence, a flag, a Devanagari conjunct), for what people read: an excerpt's edge, a highlight.
 */

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Whether offset `i` of `text` falls between the halves of a surrogate pair. */
export function splitsPair(text: string, i: number): boolean {
  return i > 0 && i < text.length && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1));
}

/** `i`, or the offset before the pair it would split. */
export const boundaryBefore = (text: string, i: number): number => (splitsPair(text, i) ? i - 1 : i);

/** `i`, or the offset after the pair it would split. */
export const boundaryAfter = (text: string, i: number): number => (splitsPair(text, i) ? i + 1 : i);


/** Characters as the API counts them (zod's string bounds): code points, an emoji one, not its two UTF-16 units. */
export const codePointCount = (text: string): number => [...text].length;

/** `text` cut to at most `max` characters, counted as the API counts them. */
export const cutChars = (text: string, max: number): string => (text.length <= max ? text : [...text].slice(0, max).join(''));

/**
 * An HTML `maxlength` for a field the API bounds at `chars` characters. Browsers count UTF-16 units, so the bound is
 * the units that many characters may take (two each at most): the browser never refuses what the API takes, and the
 * server's own check, in characters, says when a value is over.
 */
export const maxlengthFor = (chars: number): number => chars * 2;

/**
 * How far either side of an offset a grapheme is looked for. A longer one (a letter under thousands of combining
 * marks) is cut at a code point: finding its edges would read all of it, and V8's Intl.Segmenter copies its whole
 * input into each segment it yields.
 */
const GRAPHEME_REACH = 64;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Code units around which a grapheme may continue: combining marks, ZWJ/ZWNJ, surrogates (emoji, their modifiers,
 * flags' regional indicators), Hangul jamo (Korean in NFD), Arabic signs that prefix a number, CR (before LF).
 */
const MAY_JOIN = /[\p{M}\u200c\u200d\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\ud800-\udfff\u0600-\u0605\u06dd\u070f\u08e2\r]/u;

/** The [start, end) of the grapheme holding offset `i` (one whose start is `i` when `i` lies between two). */
function graphemeAt(text: string, i: number): [number, number] {
  if (i <= 0 || i >= text.length || (!MAY_JOIN.test(text[i]!) && !MAY_JOIN.test(text[i - 1]!))) return [i, i];
  let from = boundaryBefore(text, Math.max(0, i - GRAPHEME_REACH));
  // A flag is a pair of regional indicators: a window opening inside a run of them would pair them wrongly.
  while (from >= 2 && from > i - 4 * GRAPHEME_REACH && /^\p{RI}$/u.test(text.slice(from - 2, from))) from -= 2;
  const to = boundaryAfter(text, Math.min(text.length, i + GRAPHEME_REACH));
  for (const g of graphemes.segment(text.slice(from, to))) {
    const start = from + g.index;
    const end = start + g.segment.length;
    if (end <= i) continue;
    if (start === i) return [i, i];
    // A grapheme reaching past the window: cut it at a code point.
    if ((start === from && from > 0) || (end === to && to < text.length)) return [boundaryBefore(text, i), boundaryAfter(text, i)];
    return [start, end];
  }
  return [i, i];
}

/** `i`, or the start of the grapheme it would split. */
export const graphemeBefore = (text: string, i: number): number => graphemeAt(text, i)[0];

/** `i`, or the end of the grapheme it would split. */
export const graphemeAfter = (text: string, i: number): number => graphemeAt(text, i)[1];

/** `text` cut to at most `max` UTF-16 units, whole graphemes only (see `graphemeBefore`). */
export const cutUnits = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, graphemeBefore(text, max)));
