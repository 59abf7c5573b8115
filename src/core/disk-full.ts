/**
 * Recognises "out of disk space" however it surfaces: Node fs errors (ENOSPC, EDQUOT), SQLite's
 * SQLITE_FULL ("database or disk is full"), and LanceDB's Rust I/O errors, which only carry the OS
 * message ("No space left on device (os error 28)"). Wrapped errors are followed through `cause`.
 */
import { errorCauses } from './error-causes.js';
import { AppError } from './errors.js';

const CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
const MESSAGE = /no space left on device|disk quota exceeded|database or disk is full|os error (?:28|122)\b/i;

export function isDiskFull(err: unknown): boolean {
  for (const e of errorCauses(err)) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && CODES.has(code)) return true;
    if (typeof message === 'string' && MESSAGE.test(message)) return true;
  }
  return false;
}

/** The answer to a request that could not be stored for lack of space: 507, with a message the client may show. */
export const insufficientStorage = (cause: unknown): AppError =>
  new AppError('insufficient_storage', 'the server is out of disk space, so nothing was stored; try again once space has been freed', {
    cause,
    expose: true,
  });
