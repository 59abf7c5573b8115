import { type IO, isStdoutTTY, terminalWidth } from '../../terminal/io.js';
import { formatBytes } from '../../core/bytes.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { relativeTime } from './time.js';
import { cutColumns, padColumns, stringWidth } from './columns.js';

/**
 * A cell: plain text, a timestamp (relative on a TTY, RFC 3339 piped; `said` opens its relative form, as in "expired
 * 3 days ago") or a byte count.
 */
export type Cell = string | number | null | undefined | { time: string | null; said?: string } | { bytes: number };

export interface TableOptions {
  headers: string[];
  rows: Cell[][];
  now: number;
  /**
   * How the table fits a narrow terminal when a column would otherwise be cut: the columns in `drop` are left out,
   * first to last, until the `flexible` one gets FLEXIBLE_MIN columns; then only it is cut. Without: the widest
   * column gives up a column at a time.
   */
  fit?: { flexible: string; drop: string[] };
}

/** The width a flexible column (a URL, a name) keeps before other columns are left out for it. */
const FLEXIBLE_MIN = 24;

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

/**
 * Prints rows the way gh's tableprinter does: on a terminal, a header and aligned columns with relative times, cut
 * with "…" to the terminal's width; through a pipe, no header and tab-separated values with exact values, whole.
 */
export function printTable(io: IO, { headers, rows, now, fit }: TableOptions): void {
  const tty = isStdoutTTY(io);
  const cells = rows.map((r) => r.map((c) => render(c, tty, now)));
  if (!tty) {
    for (const r of cells) io.stdout.write(`${r.join('\t')}\n`);
    return;
  }
  let all = [headers, ...cells];
  const total = terminalWidth(io);
  // No column is wider than the terminal: a cell is measured no further (a server's name may be a million letters).
  const natural = () => all[0]!.map((_, i) => Math.max(...all.map((r) => Math.min(total, stringWidth(r[i] ?? '', total)))));
  if (fit) all = fitByDropping(all, natural(), total, fit);
  const widths = fitWidths(natural(), all[0]!, total);
  for (const r of all) io.stdout.write(`${r.map((c, i) => (i === r.length - 1 ? cutColumns(c, widths[i]!) : padColumns(cutColumns(c, widths[i]!), widths[i]!))).join('  ').trimEnd()}\n`);
}

/** The table without the `drop` columns it must leave out for its flexible column to keep FLEXIBLE_MIN (or all of itself). */
function fitByDropping(all: string[][], widths: number[], total: number, fit: NonNullable<TableOptions['fit']>): string[][] {
  const headers = all[0]!;
  const flexible = headers.indexOf(fit.flexible);
  if (flexible < 0) return all;
  const kept = new Set(headers.map((_, i) => i));
  const room = () => total - [...kept].filter((i) => i !== flexible).reduce((n, i) => n + widths[i]! + 2, 0);
  for (const name of fit.drop) {
    if (room() >= Math.min(widths[flexible]!, FLEXIBLE_MIN)) break;
    const i = headers.indexOf(name);
    if (i >= 0) kept.delete(i);
  }
  return all.map((r) => r.filter((_, i) => kept.has(i)));
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
