import type { IO } from '../../terminal/io.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { fitColumns, padColumns, stringWidth } from './columns.js';

/** Beyond this many rows a per-file board would scroll; one bar per phase is shown instead. */
const MAX_ROWS = 15;
const BAR_WIDTH = 20;
/** Columns of a row's meter: "processing  [####################] 100%". */
const METER_WIDTH = 10 + 2 + (BAR_WIDTH + 2) + 1 + 4;
/** Labels are padded to at least this, and never cut narrower. */
const MIN_LABEL = 8;

/** A file goes through these in order, never back: its bytes are sent, then the server processes it. */
export type Phase = 'waiting' | 'uploading' | 'processing' | 'done';
const ORDER: Record<Phase, number> = { waiting: 0, uploading: 1, processing: 2, done: 3 };

interface Row {
  label: string;
  phase: Phase;
  fraction: number;
  status: string;
}

function bar(fraction: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

const pct = (f: number) => `${String(Math.round(Math.max(0, Math.min(1, f)) * 100)).padStart(3)}%`;

/**
 * Progress on stderr, redrawn in place (only when stderr is a terminal; elsewhere commands print a plain line
 * per file). Each file shows its phase and that phase's bar: uploading bytes, then processing on the server.
 * A bar never moves backwards: a lower fraction in the same phase, or an earlier phase, is ignored.
 */
export class ProgressBoard {
  private rows: Row[];
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: IO,
    labels: string[],
  ) {
    // File names and the server's words are shown, never obeyed (the board's own control sequences are its only ones).
    this.rows = labels.map((label) => ({ label: terminalSafe(label), phase: 'waiting', fraction: 0, status: '' }));
  }

  /**
   * The label column: as wide as the longest path, cut (at its left, keeping the file name) only where the terminal
   * leaves too little room for it beside a meter.
   */
  private labelWidth(cols: number): number {
    const room = cols - 1 - 2 - METER_WIDTH;
    return Math.max(MIN_LABEL, Math.min(Math.max(...this.rows.map((r) => stringWidth(r.label, room))), room));
  }

  update(index: number, phase: Phase, fraction: number, status = ''): void {
    const row = this.rows[index];
    if (!row || ORDER[phase] < ORDER[row.phase]) return;
    row.fraction = phase === row.phase ? Math.max(row.fraction, fraction) : fraction;
    row.phase = phase;
    row.status = terminalSafe(status);
    // Redraws at most ~12 times a second however fast bytes arrive.
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.render();
    }, 80);
  }

  private lines(cols: number): string[] {
    if (this.rows.length > MAX_ROWS) {
      const n = this.rows.length;
      const sent = this.rows.reduce((s, r) => s + (ORDER[r.phase] > ORDER.uploading ? 1 : r.phase === 'uploading' ? r.fraction : 0), 0);
      const processed = this.rows.reduce((s, r) => s + (r.phase === 'done' ? 1 : r.phase === 'processing' ? r.fraction : 0), 0);
      const done = this.rows.filter((r) => r.phase === 'done').length;
      return [`uploading   ${bar(sent / n)} ${pct(sent / n)}`, `processing  ${bar(processed / n)} ${pct(processed / n)}  ${done}/${n} files done`];
    }
    const width = this.labelWidth(cols);
    return this.rows.map((r) => {
      const label = stringWidth(r.label, width) > width ? padColumns(`…${fitColumns(r.label, width - 1, true)}`, width) : padColumns(r.label, width);
      const meter = r.phase === 'uploading' || r.phase === 'processing' ? `${r.phase.padEnd(10)}  ${bar(r.fraction)} ${pct(r.fraction)}` : '';
      // A status that only repeats the phase ("processing") is said once, by the meter.
      const status = meter && r.status === r.phase ? '' : r.status;
      return `${label}  ${meter}${meter && status ? '  ' : ''}${status}`.trimEnd();
    });
  }

  render(): void {
    const cols = this.io.stderr.columns || 100; // a pseudo-terminal without a size reports 0
    let out = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    const lines = this.lines(cols);
    for (const l of lines) out += `\x1b[2K${l.slice(0, cols - 1)}\n`;
    this.drawn = lines.length;
    this.io.stderr.write(out);
  }

  /** Prints `line` above the board (which is redrawn under it), so a notice is neither overwritten nor torn. */
  note(line: string): void {
    const up = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    this.io.stderr.write(`${up}\x1b[2K${terminalSafe(line)}\n\x1b[J`);
    this.drawn = 0;
    this.render();
  }

  /** Draws the final state and leaves it on screen. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.render();
  }
}
