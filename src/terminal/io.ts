import type { Readable, Writable } from 'node:stream';
import { terminalSafe } from '../core/unsafe-text.js';

/** All CLI output goes through here: data to stdout, notices, progress and prompts to stderr. */
export interface IO {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** Set for `--json`: notices are left out so stderr holds only warnings and errors. */
  quiet?: boolean;
}

export const processIO = (): IO => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Whether a person could answer a prompt here: stdin and stderr are terminals. */
export const promptable = (io: IO): boolean => Boolean(io.stdin.isTTY && io.stderr.isTTY);

/** Prompts only where a person can answer: stdin and stderr are terminals and this is not CI. */
export const canPrompt = (io: IO): boolean => promptable(io) && !io.env.CI;

/** Whether stdout is a terminal: decides aligned tables, relative times and bold highlights. */
export const isStdoutTTY = (io: IO): boolean => Boolean(io.stdout.isTTY);

/** Whether stderr is a terminal: a browser may be opened for the person there. */
export const isStderrTTY = (io: IO): boolean => Boolean(io.stderr.isTTY);

/**
 * Progress bars only where they can be redrawn: stderr is a terminal that moves its cursor (TERM=dumb — Emacs's shell,
 * some CI consoles — prints the escape sequences as they are).
 */
export const canRedraw = (io: IO): boolean => isStderrTTY(io) && io.env.TERM !== 'dumb';

/**
 * Whether to style a stream: FORCE_COLOR / CLICOLOR_FORCE (non-empty, not "0") force it on even through a pipe;
 * otherwise only on a terminal, and never with NO_COLOR (https://no-color.org) or TERM=dumb.
 */
export function colorEnabled(io: IO, stream: 'stdout' | 'stderr' = 'stdout'): boolean {
  const forced = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
  if (forced(io.env.FORCE_COLOR) || forced(io.env.CLICOLOR_FORCE)) return true;
  return Boolean(io[stream].isTTY) && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
}

/** The width to wrap text to: the terminal's, else COLUMNS, else 80. */
export function terminalWidth(io: IO): number {
  return io.stdout.columns || Number(io.env.COLUMNS) || 80;
}

/** ANSI styling where colorEnabled says so. */
export function styles(io: IO, stream: 'stdout' | 'stderr' = 'stdout') {
  const on = colorEnabled(io, stream);
  const wrap = (open: string, close: string) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { enabled: on, bold: wrap('1', '22'), underline: wrap('4', '24'), dim: wrap('2', '22'), red: wrap('31', '39'), green: wrap('32', '39'), yellow: wrap('33', '39') };
}

/** Data for scripts: one JSON document on stdout and nothing else (`--json`). */
export function writeJson(io: IO, data: unknown): void {
  io.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
}

export function writeOut(io: IO, line: string): void {
  io.stdout.write(line.endsWith('\n') ? line : `${line}\n`);
}

/**
 * Notices and progress lines go to stderr so stdout stays clean for data; none under `--json`. A line often carries
 * a server's or a document's words, so it is printed terminal-safe, and `style` (dim…) is applied after that.
 */
export function notice(io: IO, line: string, style: (s: string) => string = (s) => s): void {
  if (io.quiet) return;
  io.stderr.write(`${style(terminalSafe(line.replace(/\n$/, '')))}\n`);
}

/** Warnings go to stderr even under `--json`: something the person must know (credentials in plain text). */
export function warn(io: IO, line: string): void {
  io.stderr.write(`warning: ${terminalSafe(line)}\n`);
}

/**
 * Ctrl-C as an AbortSignal, for the span of a wait that should end with a word about what goes on without the CLI
 * (`upload --wait`); `dispose` gives SIGINT back its default (exit at once).
 */
export function interruptSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}

/** Reads all of stdin as text (passwords and tokens piped in by scripts). */
export async function readStdin(io: IO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Resolves with the first non-empty line typed or piped on stdin, or null at end of input.
 * Used where a pasted value races another event (the login callback), so it can be abandoned.
 */
export function readLine(io: IO, signal?: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    let buf = '';
    const finish = (value: string | null) => {
      io.stdin.off('data', onData);
      io.stdin.off('end', onEnd);
      signal?.removeEventListener('abort', onAbort);
      io.stdin.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) return finish(line);
      }
    };
    const onEnd = () => finish(buf.trim() || null);
    const onAbort = () => finish(null);
    if (signal?.aborted) return resolve(null);
    signal?.addEventListener('abort', onAbort);
    io.stdin.on('data', onData);
    io.stdin.on('end', onEnd);
    io.stdin.resume();
  });
}
