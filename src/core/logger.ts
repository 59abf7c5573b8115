import { destination as pinoDestination, pino, stdTimeFunctions, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. Anything that could hold a secret is redacted by path, and request logs
 * carry the path without its query string (setup links and OAuth redirects put secrets there).
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

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'docsearch' },
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination ?? pinoDestination({ fd: 1, sync: false }),
  );
}
