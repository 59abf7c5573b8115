import { z } from 'zod';
import { type AppError, invalidRequest } from '../../core/errors.js';

/**
 * What every list says of a cursor it cannot take (altered, cut short, from another list or another order, or one
 * it no longer takes), with what to do about it (docs/api.md, "Conventions"); `of`: what it must belong to.
 */
const refusal = (of: string): string => `not a cursor this server issued for ${of}, or no longer valid; leave it out to start again from the first page`;

export const CURSOR_REFUSED = refusal('this list');

/** The 400 of a refused `query.cursor`; `of` names what it must belong to when more than the list (a sort order). */
export const cursorRefused = (of = 'this list'): AppError => invalidRequest(`query.cursor: ${refusal(of)}`);

/** Cursors are opaque to clients: the last id of the previous page, base64url-encoded. */
export const encodeCursor = (lastId: string): string => Buffer.from(lastId, 'utf8').toString('base64url');

/** The id a cursor of a list of `prefix` ids (`aud`, `prj`) holds, or undefined when it is not one. */
export function cursorId(cursor: string, prefix: string): string | undefined {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return id.startsWith(`${prefix}_`) && /^[a-z]{3}_[0-9a-z]{9}[0-9A-Za-z]{12}$/.test(id) ? id : undefined;
}

export function decodeCursor(cursor: string | undefined, prefix: string): string | undefined {
  if (cursor === undefined) return undefined;
  const id = cursorId(cursor, prefix);
  if (!id) throw cursorRefused();
  return id;
}

/**
 * A list's `cursor` query parameter, checked as the query is parsed: refused with the same words whatever is wrong
 * with it (too long included), and before any answer begins (an export's stream too).
 */
export const listCursor = (prefix: string) =>
  z
    .string()
    .max(200, { error: CURSOR_REFUSED, abort: true })
    .refine((c) => cursorId(c, prefix) !== undefined, CURSOR_REFUSED);
