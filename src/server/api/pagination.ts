import { invalidRequest } from '../../core/errors.js';

/** Cursors are opaque to clients: the last id of the previous page, base64url-encoded. */
export const encodeCursor = (lastId: string): string => Buffer.from(lastId, 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]{3}_[0-9a-z]{9}[0-9A-Za-z]{12}$/.test(id)) throw invalidRequest('query.cursor: not a cursor this server issued');
  return id;
}
