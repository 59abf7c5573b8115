/**
 * Terminal columns, not UTF-16 units: a CJK character or most emoji take two columns, a combining mark none, and
 * ANSI styling none (string-width, which follows Unicode's East Asian Width). `.length` misaligned tables and
 * wrapped lines of non-Latin names.
 */
let measure: ((text: string) => number) | undefined;
/** wrap-ansi: word-wraps by the same columns, closing and reopening styling at line ends. */
let wrapper: ((text: string, columns: number, options: { trim: boolean }) => string) | undefined;

/**
 * Loads string-width and wrap-ansi, before a command that prints runs (commands/global-options.ts). Loading them
 * builds a Unicode segmenter, a noticeable pause that `--version` and shell completion, run on every Tab, should not
 * pay.
 */
export async function loadColumns(): Promise<void> {
  measure ??= (await import('string-width')).default;
  wrapper ??= (await import('wrap-ansi')).default;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Columns `text` takes; before loadColumns (an early usage error), its visible length. */
export function stringWidth(text: string): number {
  return measure ? measure(text) : text.replace(ANSI, '').length;
}

/** `text` word-wrapped to `columns` columns (a word wider than that alone on its line); before loadColumns, one line. */
export const wrapColumns = (text: string, columns: number): string[] => (wrapper ? wrapper(text, columns, { trim: true }) : text).split('\n');

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
