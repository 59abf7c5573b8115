// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Visible length: ANSI styling takes no columns. */
export const visibleLength = (s: string): number => s.replace(ANSI, '').length;

/**
 * Word-wraps `text` to `width` columns, the first line starting with `indent` and the others with `hang` (so
 * wrapped lines never fall back to column 0). Styling sequences are carried along and not counted. A word longer
 * than a line gets a line alone.
 */
export function wrap(text: string, width: number, indent = '', hang = indent): string[] {
  const lines: string[] = [];
  let line = '';
  let len = 0;
  const prefix = () => (lines.length === 0 ? indent : hang);
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const w = visibleLength(word);
    const room = Math.max(20, width - prefix().length);
    if (len > 0 && len + 1 + w > room) {
      lines.push(prefix() + line);
      line = '';
      len = 0;
    }
    line += (len > 0 ? ' ' : '') + word;
    len += (len > 0 ? 1 : 0) + w;
  }
  if (line) lines.push(prefix() + line);
  return lines;
}
