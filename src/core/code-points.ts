/**
 * Offsets into UTF-16 text that never fall between the two halves of a surrogate pair (an emoji, a rare CJK
 * character): a cut there leaves a lone half, which strict UTF-8 decoders refuse or show as U+FFFD.
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

/** `text` cut to at most `max` UTF-16 units, whole characters only. */
export const cutUnits = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, boundaryBefore(text, max)));

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
