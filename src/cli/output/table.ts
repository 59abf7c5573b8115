import { type IO, isStdoutTTY, terminalWidth } from '../../terminal/io.js';
import { formatBytes } from '../../core/bytes.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { relativeTime } from './time.js';
import { fitColumns, padColumns, stringWidth } from './columns.js';

/**
 * A cell: plain text, a timestamp (relative on a TTY, RFC 3339 piped; `said` opens its relative form, as in "expired
 * 3 days ago") or a byte count.
 */
export type Cell = string | number | null | undefined | { time: string | null; said?: string } | { bytes: number };

export interface TableOptions {
  headers: string[];
  rows: Cell[][];
  now: number;
}

function render(cell: Cell, tty: boolean, now: number): string {
  if (cell === null || cell === undefined) return tty ? '-' : '';
  if (typeof cell === 'object') {
    if ('time' in cell) return cell.time === null ? (tty ? 'never' : '') : tty ? [cell.said, relativeTime(cell.time, now)].filter(Boolean).join(' ') : cell.time;
    return tty ? formatBytes(cell.bytes) : String(cell.bytes);
  }
  // Tabs and newlines inside a value would break the tab-separated form; other controls are shown, not obeyed.
  return terminalSafe(String(cell).replace(/[\t\r\n]+/g, ' '));
}

/**
 * Column widths that fit `total` terminal columns with two spaces between: the widest column gives up a column at a
 * time (gh truncates the same way), none narrower than its header; the ID column is never cut (an id is copied whole).
 */
function fitWidths(widths: number[], headers: string[], total: number): number[] {
  const out = [...widths];
  const floor = headers.map((h, i) => (h === 'ID' ? widths[i]! : Math.min(widths[i]!, Math.max(4, stringWidth(h)))));
  const used = () => out.reduce((a, b) => a + b, 0) + 2 * (out.length - 1);
  while (used() > total) {
    let widest = -1;
    out.forEach((w, i) => {
      if (w > floor[i]! && (widest < 0 || w > out[widest]!)) widest = i;
    });
    if (widest < 0) break;
    out[widest]!--;
  }
  return out;
}

/** `text` within `columns` columns, its end replaced by "…" when it had to be cut. */
const cut = (text: string, columns: number): string => (stringWidth(text) <= columns ? text : `${fitColumns(text, columns - 1)}…`);

/**
 * Prints rows the way gh's tableprinter does: on a terminal, a header and aligned columns with relative times, cut
 * with "…" to the terminal's width; through a pipe, no header and tab-separated values with exact values, whole.
 */
export function printTable(io: IO, { headers, rows, now }: TableOptions): void {
  const tty = isStdoutTTY(io);
  const cells = rows.map((r) => r.map((c) => render(c, tty, now)));
  if (!tty) {
    for (const r of cells) io.stdout.write(`${r.join('\t')}\n`);
    return;
  }
  const all = [headers, ...cells];
  const widths = fitWidths(
    headers.map((_, i) => Math.max(...all.map((r) => stringWidth(r[i] ?? '')))),
    headers,
    terminalWidth(io),
  );
  for (const r of all) io.stdout.write(`${r.map((c, i) => (i === r.length - 1 ? cut(c, widths[i]!) : padColumns(cut(c, widths[i]!), widths[i]!))).join('  ').trimEnd()}\n`);
}

/** Key/value pairs for `show` commands: aligned on a TTY, tab-separated piped. */
export function printFields(io: IO, fields: Array<[string, Cell]>, now: number): void {
  const tty = isStdoutTTY(io);
  const width = Math.max(...fields.map(([k]) => stringWidth(k)));
  for (const [k, v] of fields) {
    const value = render(v, tty, now);
    io.stdout.write(tty ? `${padColumns(`${k}:`, width + 2)}${value}\n` : `${k}\t${value}\n`);
  }
}
