import { destination as pinoDestination, pino, stdTimeFunctions, type Logger } from 'pino';
import { textDestination } from './log-text.js';

export type { Logger };

/** JSON lines (for journald, containers, files and log shippers), or short text lines for a person at a terminal. */
export type LogStyle = { format: 'json' } | { format: 'text'; color: boolean };

/**
 * Logs on stdout: JSON lines, or text lines made from the same redacted JSON (log-text.ts). Fields named for a secret
 * are redacted by path, and request logs carry the path without its query string (setup links and OAuth redirects put
 * secrets there). `code` and `key` are not among the names: nothing secret is logged under them, while error codes
 * (`unauthorized`, an `err.code` such as `ECONNREFUSED`) are what a line is read for.
 */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'password',
  'token',
  'secret',
  'access_token',
  'refresh_token',
  'client_secret',
  'api_key',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.token',
  '*.secret',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
  '*.api_key',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'config.openaiApiKey',
  'config.rerankerApiKey',
];

/**
 * The credentials docsearch issues, found by their form wherever a line holds them: a key pasted into a search, a
 * path or a field ends up quoted in messages a field name cannot redact. Their characters need no JSON escaping, so
 * the line stays what it was otherwise.
 */
const ISSUED_CREDENTIAL = /(dsk|dscs)_[0-9A-Za-z]{43,}/g;

export function withoutIssuedCredentials(line: string): string {
  return line.replace(ISSUED_CREDENTIAL, '$1_[redacted]');
}

export function createLogger(level: string, destination?: NodeJS.WritableStream, style: LogStyle = { format: 'json' }): Logger {
  const out = destination ?? pinoDestination({ fd: 1, sync: false });
  return pino(
    {
      level,
      base: { service: 'docsearch' },
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: { streamWrite: withoutIssuedCredentials },
    },
    style.format === 'text' ? textDestination(out, style.color) : out,
  );
}
