/**
 * How a migration reports as it goes, on stderr: one line redrawn in place on a terminal; plain lines otherwise
 * (a log, CI), at each tenth of a step and at its end, so that a long copy shows it is moving without flooding.
 */
import { type IO, isStderrTTY } from '../../terminal/io.js';

export interface Step {
  /** `n` more units done (and `bytes` more moved). */
  add(n: number, bytes?: number): void;
  /** The step is over; `summary` replaces the counter. */
  end(summary?: string): void;
}

export interface Progress {
  /** Starts a step of `total` units (rows, files), or an open-ended one. */
  step(label: string, total?: number, unit?: string): Step;
  /** A line of its own. */
  line(text: string): void;
}

const MB = 1024 * 1024;
const count = (n: number) => n.toLocaleString('en-US');
const megabytes = (b: number) => (b >= 0.1 * MB ? ` (${(b / MB).toFixed(1)} MB)` : '');

export function progressOn(io: IO): Progress {
  const tty = isStderrTTY(io);
  let open = false;
  const clear = () => {
    if (open) io.stderr.write('\r\x1b[K');
  };
  return {
    line(text) {
      clear();
      open = false;
      io.stderr.write(`${text}\n`);
    },
    step(label, total, unit = 'rows') {
      let done = 0;
      let bytes = 0;
      let tenths = 0;
      const text = () => `${label}: ${count(done)}${total === undefined ? '' : `/${count(total)}`} ${unit}${megabytes(bytes)}`;
      if (tty) {
        io.stderr.write(text());
        open = true;
      }
      return {
        add(n, b = 0) {
          done += n;
          bytes += b;
          if (tty) {
            io.stderr.write(`\r\x1b[K${text()}`);
            return;
          }
          const now = total ? Math.floor((done / total) * 10) : 0;
          if (total && now > tenths && done < total) {
            tenths = now;
            io.stderr.write(`${text()}\n`);
          }
        },
        end(summary) {
          clear();
          open = false;
          io.stderr.write(`${summary ? `${label}: ${summary}` : text()}\n`);
        },
      };
    },
  };
}
