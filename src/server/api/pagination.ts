import { createHash } from 'node:crypto';
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

/**
 * What a cursor belongs to: the list, whose it is and what narrows and orders it (`['trash', userId, projectId]`). A
 * cursor carries a digest of it, so one sent with another list, person, filters or order is refused rather than read
 * as a place in a list it never came from. Not a secret: it catches mistakes; a place shows nothing the list does not.
 */
export type CursorScope = readonly unknown[];

const DIGEST = /^[\w-]{11}$/;

/** The scope's digest a cursor carries: 66 bits of SHA-256, base64url. */
export const scopeDigest = (scope: CursorScope): string => createHash('sha256').update(JSON.stringify(scope)).digest('base64url').slice(0, 11);

/** Whether `id` is an id of `prefix` (`aud`, `prj`). */
export const isListId = (id: unknown, prefix: string): id is string => typeof id === 'string' && id.startsWith(`${prefix}_`) && /^[a-z]{3}_[0-9a-z]{9}[0-9A-Za-z]{12}$/.test(id);

/** Cursors are opaque to clients: the last id of the previous page and its list's digest, base64url-encoded. */
export const encodeCursor = (lastId: string, scope: CursorScope): string => Buffer.from(`${lastId}.${scopeDigest(scope)}`, 'utf8').toString('base64url');

/** The id a cursor of a list of `prefix` ids holds, or undefined when it is not one (whose list it is: decodeCursor). */
export function cursorId(cursor: string, prefix: string): string | undefined {
  const [id, digest, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  return rest.length === 0 && digest !== undefined && DIGEST.test(digest) && isListId(id, prefix) ? id : undefined;
}

/** The id of a cursor issued for this list (`prefix` ids, `scope`), or undefined when it is not one. */
export function cursorIn(cursor: string, prefix: string, scope: CursorScope): string | undefined {
  const id = cursorId(cursor, prefix);
  // Encoded again, exactly: base64url decoding skips what it cannot read, so an altered cursor could decode alike.
  return id !== undefined && encodeCursor(id, scope) === cursor ? id : undefined;
}

export function decodeCursor(cursor: string | undefined, prefix: string, scope: CursorScope): string | undefined {
  if (cursor === undefined) return undefined;
  const id = cursorIn(cursor, prefix, scope);
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
