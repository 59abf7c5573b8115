import { terminalSafe } from './unsafe-text.js';

/**
 * Log lines for a person at a terminal (`--log-format text`): one short line per event, made from the JSON line
 * pino has already written and redacted, so the text can only ever show less than the JSON would. Hand-written
 * rather than pino-pretty: that prints every field of an event over several lines, and its one-line form needs
 * this same choice of fields anyway.
 */

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI styles by level: errors red, warnings yellow, debugging dim. */
const LEVEL_STYLE: Record<number, string> = { 10: '2', 20: '2', 40: '33', 50: '31', 60: '31' };
/** In every line, or said by the line's shape: not repeated as key=value. */
const SHOWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service', 'req_id', 'event', 'err']);
const REQUEST = ['method', 'path', 'status', 'ms'];

const two = (n: number) => String(n).padStart(2, '0');

/** One line of text, without control characters from the logged values (a file name could hold an escape). */
const oneLine = (text: string) => terminalSafe(text).replace(/\n/g, '\\n').replace(/\t/g, ' ');

function value(v: string | number | boolean): string {
  const s = String(v);
  return typeof v === 'string' && (s === '' || /\s|"/.test(s)) ? JSON.stringify(s) : s;
}

/** `entry` (one parsed pino line) as "12:04:31 INFO  GET /api/v1/search 200 12 ms". */
export function textLogLine(entry: Record<string, unknown>, color: boolean): string {
  const style = (code: string | undefined, s: string) => (color && code ? `\x1b[${code}m${s}\x1b[0m` : s);
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const at = new Date(typeof entry.time === 'string' || typeof entry.time === 'number' ? entry.time : Date.now());
  const time = `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
  const isRequest = entry.msg === 'request' && typeof entry.method === 'string';
  const parts: string[] = [];
  if (isRequest) parts.push(`${entry.method} ${entry.path} ${entry.status} ${entry.ms} ms`);
  else parts.push(String(entry.msg ?? ''));
  const err = entry.err as { message?: unknown; code?: unknown } | undefined;
  if (err && typeof err.message === 'string') parts[0] += `: ${err.message}`;
  // An error's code (a PostgreSQL 57P01, an S3 NoSuchBucket) is often what tells causes apart, and not in its message.
  if (err && typeof err.code === 'string' && !(typeof err.message === 'string' && err.message.includes(err.code))) parts[0] += ` (${err.code})`;
  for (const [k, v] of Object.entries(entry)) {
    if (SHOWN.has(k) || (isRequest && REQUEST.includes(k))) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(`${k}=${value(v)}`);
  }
  return `${style('2', time)} ${style(LEVEL_STYLE[level], (LEVELS[level] ?? String(level)).padEnd(5))} ${oneLine(parts.join(' '))}\n`;
}

/**
 * A pino destination that writes `out` text lines instead of JSON ones. Each write is one whole JSON line (pino
 * writes an event at once); one that does not parse is passed through as it is.
 */
export function textDestination(out: { write(s: string): unknown; flush?: (cb?: (err?: Error) => void) => void; flushSync?: () => void }, color: boolean) {
  return {
    write(line: string): void {
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        out.write(terminalSafe(line));
        return;
      }
      out.write(textLogLine(entry as Record<string, unknown>, color));
    },
    flush: (cb?: (err?: Error) => void) => (out.flush ? out.flush(cb) : cb?.()),
    flushSync: () => out.flushSync?.(),
  };
}
