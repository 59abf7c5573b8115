/**
 * Recognises "the database cannot be reached right now" (PostgreSQL restarting, a dropped connection, a network
 * fault) as opposed to a query the database refused: the first is worth waiting out, the second is not. Covers
 * socket errors, PostgreSQL's connection-exception class (SQLSTATE 08xxx) and shutdown codes (57P01–57P03), and the
 * messages `pg` and its pool use for a lost or unobtainable connection. Wrapped errors are followed through `cause`.
 * SQLite never raises these: an embedded database is always reachable.
 */
import { errorCauses } from './error-causes.js';

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const MESSAGE = /connection terminated|timeout exceeded when trying to connect|not queryable|the database system is (?:starting up|shutting down)/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of errorCauses(err)) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (typeof message === 'string' && MESSAGE.test(message)) return true;
    // AggregateError (a host name resolving to several addresses, each refused).
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
  }
  return false;
}
