import type { IO } from '../../terminal/io.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { fitColumns, padColumns, stringWidth } from './columns.js';

/** Beyond this many rows a per-file board would scroll; one bar per phase is shown instead. */
const MAX_ROWS = 15;
const BAR_WIDTH = 20;

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
  private readonly width: number;

  constructor(
    private readonly io: IO,
    labels: string[],
  ) {
    // File names and the server's words are shown, never obeyed (the board's own control sequences are its only ones).
    this.rows = labels.map((label) => ({ label: terminalSafe(label), phase: 'waiting', fraction: 0, status: '' }));
    this.width = Math.min(40, Math.max(...this.rows.map((r) => stringWidth(r.label)), 8));
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

  private lines(): string[] {
    if (this.rows.length > MAX_ROWS) {
      const n = this.rows.length;
      const sent = this.rows.reduce((s, r) => s + (ORDER[r.phase] > ORDER.uploading ? 1 : r.phase === 'uploading' ? r.fraction : 0), 0);
      const processed = this.rows.reduce((s, r) => s + (r.phase === 'done' ? 1 : r.phase === 'processing' ? r.fraction : 0), 0);
      const done = this.rows.filter((r) => r.phase === 'done').length;
      return [`uploading   ${bar(sent / n)} ${pct(sent / n)}`, `processing  ${bar(processed / n)} ${pct(processed / n)}  ${done}/${n} files done`];
    }
    return this.rows.map((r) => {
      const label = stringWidth(r.label) > this.width ? padColumns(`…${fitColumns(r.label, this.width - 1, true)}`, this.width) : padColumns(r.label, this.width);
      const meter = r.phase === 'uploading' || r.phase === 'processing' ? `${r.phase.padEnd(10)}  ${bar(r.fraction)} ${pct(r.fraction)}` : '';
      // A status that only repeats the phase ("processing") is said once, by the meter.
      const status = meter && r.status === r.phase ? '' : r.status;
      return `${label}  ${meter}${meter && status ? '  ' : ''}${status}`.trimEnd();
    });
  }

  render(): void {
    const cols = this.io.stderr.columns || 100; // a pseudo-terminal without a size reports 0
    let out = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    const lines = this.lines();
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
