import type { IO } from '../io.js';

/** Beyond this many rows a per-file board would scroll; one aggregate bar is shown instead. */
const MAX_ROWS = 15;
const BAR_WIDTH = 24;

interface Row {
  label: string;
  fraction: number;
  status: string;
}

function bar(fraction: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

/**
 * Progress bars on stderr, one per file, redrawn in place (only used when stderr is a terminal;
 * elsewhere commands print a plain line per file instead).
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
    this.rows = labels.map((label) => ({ label, fraction: 0, status: 'waiting' }));
    this.width = Math.min(40, Math.max(...labels.map((l) => l.length), 8));
  }

  update(index: number, fraction: number, status: string): void {
    const row = this.rows[index];
    if (!row) return;
    row.fraction = fraction;
    row.status = status;
    // Redraws at most ~12 times a second however fast bytes arrive.
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.render();
    }, 80);
  }

  private lines(): string[] {
    if (this.rows.length > MAX_ROWS) {
      const done = this.rows.filter((r) => r.fraction >= 1).length;
      const avg = this.rows.reduce((n, r) => n + r.fraction, 0) / this.rows.length;
      return [`${bar(avg)} ${String(Math.round(avg * 100)).padStart(3)}%  ${done}/${this.rows.length} files`];
    }
    return this.rows.map((r) => {
      const label = r.label.length > this.width ? `…${r.label.slice(-(this.width - 1))}` : r.label.padEnd(this.width);
      return `${label}  ${bar(r.fraction)} ${String(Math.round(r.fraction * 100)).padStart(3)}%  ${r.status}`;
    });
  }

  render(): void {
    const cols = this.io.stderr.columns ?? 100;
    let out = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    const lines = this.lines();
    for (const l of lines) out += `\x1b[2K${l.slice(0, cols - 1)}\n`;
    this.drawn = lines.length;
    this.io.stderr.write(out);
  }

  /** Draws the final state and leaves it on screen. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.render();
  }
}
