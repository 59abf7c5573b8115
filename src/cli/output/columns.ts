import stringWidth from 'string-width';

/**
 * Terminal columns, not UTF-16 units: a CJK character or most emoji take two columns, a combining mark none, and
 * ANSI styling none (string-width, which follows Unicode's East Asian Width). `.length` misaligned tables and
 * wrapped lines of non-Latin names.
 */
export { stringWidth };

/** `text` followed by spaces up to `columns` columns. */
export const padColumns = (text: string, columns: number): string => text + ' '.repeat(Math.max(0, columns - stringWidth(text)));

/** The longest start (or, with `fromEnd`, end) of `text` that fits in `columns` columns, in whole characters. */
export function fitColumns(text: string, columns: number, fromEnd = false): string {
  const chars = [...new Intl.Segmenter().segment(text)].map((s) => s.segment);
  if (fromEnd) chars.reverse();
  const kept: string[] = [];
  let used = 0;
  for (const ch of chars) {
    const w = stringWidth(ch);
    if (used + w > columns) break;
    kept.push(ch);
    used += w;
  }
  return (fromEnd ? kept.reverse() : kept).join('');
}
