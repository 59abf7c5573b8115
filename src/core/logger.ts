import { destination as pinoDestination, pino, stdTimeFunctions, type Logger } from 'pino';
import { textDestination } from './log-text.js';

export type { Logger };

/** JSON lines (for journald, containers, files and log shippers), or short text lines for a person at a terminal. */
export type LogStyle = { format: 'json' } | { format: 'text'; color: boolean };

/**
 * Logs on stdout: JSON lines, or text lines made from the same redacted JSON (log-text.ts). Anything that could hold a
 * secret is redacted by path, and request logs carry the path without its query string (setup links and OAuth
 * redirects put secrets there).
 */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'password',
  'token',
  'key',
  'secret',
  'code',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
  '*.code',
  '*.key',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'config.openaiApiKey',
  'config.rerankerApiKey',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream, style: LogStyle = { format: 'json' }): Logger {
  const out = destination ?? pinoDestination({ fd: 1, sync: false });
  return pino(
    {
      level,
      base: { service: 'docsearch' },
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    style.format === 'text' ? textDestination(out, style.color) : out,
  );
}
