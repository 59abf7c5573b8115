/**
 * Terminal columns, not UTF-16 units: a CJK character or most emoji take two columns, a combining mark none, and
 * ANSI styling none (string-width, which follows Unicode's East Asian Width). `.length` misaligned tables and
 * wrapped lines of non-Latin names.
 */
let measure: ((text: string) => number) | undefined;

/**
 * Loads string-width, before a command that prints runs (commands/index.ts). Loading it builds a Unicode segmenter,
 * a noticeable pause that `--version` and shell completion, run on every Tab, should not pay.
 */
export async function loadColumns(): Promise<void> {
  measure ??= (await import('string-width')).default;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Columns `text` takes; before loadColumns (an early usage error), its visible length. */
export function stringWidth(text: string): number {
  return measure ? measure(text) : text.replace(ANSI, '').length;
}

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
