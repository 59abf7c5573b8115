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
