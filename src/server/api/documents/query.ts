import { z } from 'zod';
import { FILTER_PARAMS, filtersFromParams, isFilterParam } from '../../../core/filter-params.js';
import { FACETS } from '../../../core/facet-names.js';
import { type DocumentFilters, Facets, Filters, normalFilters } from '../../../core/filters.js';
import { MOMENT, MOMENT_FORM, momentProblem, momentSpan } from '../../../core/moment.js';
import { MAX_FILENAME_CHARS } from '../../../core/name-limits.js';
import { DOCUMENT_SORTS, type DocumentFilter, type DocumentPosition, type DocumentSort } from '../../../store/sql/documents.js';
import { type CursorScope, cursorRefused, decodeCursor, encodeCursor, isListId, scopeDigest } from '../pagination.js';
import { parseInput } from '../validate.js';
import { MAX_PATH_CHARS } from './paths.js';
import { DocumentStatus } from './wire.js';

/**
 * The filters and order of a document list, shared by `GET /api/v1/documents` and the Documents page so both
 * accept the same words and mean the same by them. The filter language's fields (core/filters.ts) are query
 * parameters of the same names (core/filter-params.ts).
 */

/**
 * A time as RFC 3339, or a day (YYYY-MM-DD, 00:00 UTC); after parsing, the first whole millisecond at or after it,
 * which "at or after" and "before" bounds compare with (core/moment.ts momentSpan).
 */
export const Time = z
  .string()
  .max(40)
  .regex(MOMENT, MOMENT_FORM)
  .transform((v, ctx) => {
    const problem = momentProblem(v);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return momentSpan(v)!.from;
  });

const Param = z.union([z.string(), z.array(z.string())]);
const filterParam = (name: string) => Param.optional().describe(`${(Filters.shape as Record<string, z.ZodType>)[name]!.description ?? ''}; lists comma-separated or repeated (docs/api.md#filters)`);

/**
 * The longest cursor this list issues: a name order's holds the last name, up to 255 UTF-16 units of at most 3 bytes
 * each in its JSON (`"` and `\` take 2), with the order, the id and its list's digest: 819 bytes, 1,092 in base64url.
 */
const MAX_LIST_CURSOR = 1100;

const LIST_PARAMS = {
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(MAX_LIST_CURSOR).optional().describe('next_cursor of the previous page (with the same filters and sort)'),
  project_id: z.string().min(1).max(100).optional(),
  status: DocumentStatus.optional(),
  path: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('only documents uploaded from this relative path'),
  filename: z.string().min(1).max(MAX_FILENAME_CHARS).optional().describe('only documents whose name contains this, any case'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}(,[0-9a-f]{64}){0,99}$/, 'must be one to 100 lowercase hex SHA-256 digests, comma-separated')
    .optional()
    .describe('only documents with these contents: up to 100 SHA-256 digests, comma-separated (is this file already in my library, and where?)'),
  sort: z
    .enum(DOCUMENT_SORTS)
    .default('uploaded')
    .describe('uploaded (oldest first, the default), name (ignoring A–Z case; other characters by code point) or size; a leading - reverses'),
  // The names search's `facets` takes, checked by the same schema: an unknown one is a 400 naming it.
  facets: Param.optional()
    .describe(`count the whole list (every page, not only this one) by these: ${FACETS.join(', ')}, metadata.<key>; comma-separated or repeated (docs/api.md#facets)`)
    .transform((v) => (v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')))
    .pipe(Facets.optional()),
};

export const DocumentListQuery = z
  .object({
    ...LIST_PARAMS,
    ...Object.fromEntries(FILTER_PARAMS.map((name) => [name, filterParam(name)])),
    metadata: Param.optional().describe('the search body\'s `filters.metadata` as JSON; or `metadata.<key>=<value>` (equal, repeated: any of) and `metadata.<key>.$gte=<value>` ($gt, $lt, $lte, $in, $exists) as parameters of their own'),
  })
  .catchall(Param)
  .superRefine((q, ctx) => {
    // Own keys only: `constructor` or `toString` is as unknown as any other name.
    const unknown = Object.keys(q).filter((k) => !Object.hasOwn(LIST_PARAMS, k) && !isFilterParam(k));
    if (unknown.length > 0) ctx.addIssue({ code: 'unrecognized_keys', keys: unknown, message: 'unknown parameters' });
  });
export type DocumentListQuery = z.output<typeof DocumentListQuery>;

/** The filter language's fields of a list query, validated (a 400 names the parameter) and in normal form. */
export function listFilters(q: Record<string, unknown>): DocumentFilters | undefined {
  const raw = filtersFromParams(Object.fromEntries(Object.entries(q).filter(([k]) => isFilterParam(k))) as Record<string, string | string[]>);
  return raw ? normalFilters(parseInput(Filters, raw, 'query')) : undefined;
}

export function toFilter(q: DocumentListQuery): DocumentFilter {
  const narrow = listFilters(q);
  return {
    ...(q.project_id ? { projectId: q.project_id } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.path !== undefined ? { path: q.path } : {}),
    ...(q.filename ? { filename: q.filename } : {}),
    ...(q.sha256 ? { sha256: [...new Set(q.sha256.split(','))] } : {}),
    ...(narrow ? { narrow } : {}),
  };
}

/** What a document list's cursor belongs to: whose list, in which order, under which filters (as toFilter reads them). */
export const listScope = (userId: string, sort: DocumentSort, filter: DocumentFilter): CursorScope => ['documents', userId, sort, filter];

/**
 * Cursors are opaque. In upload order (the default) a cursor is the last id, as for every other list; in any
 * other order it also carries the order and the last sort value, and is refused under a different order. Both carry
 * their list's digest (pagination.ts): one of other filters or another person is refused too.
 */
export function encodeListCursor(sort: DocumentSort, at: DocumentPosition, scope: CursorScope): string {
  if (sort === 'uploaded') return encodeCursor(at.id, scope);
  return Buffer.from(JSON.stringify([sort, at.key ?? null, at.id, scopeDigest(scope)]), 'utf8').toString('base64url');
}

export function decodeListCursor(sort: DocumentSort, cursor: string | undefined, scope: CursorScope): DocumentPosition | undefined {
  if (cursor === undefined) return undefined;
  if (sort === 'uploaded') return { id: decodeCursor(cursor, 'doc', scope)! };
  const bad = cursorRefused('this sort order');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (!Array.isArray(value) || value.length !== 4 || value[0] !== sort) throw bad;
  const [, key, id, digest] = value as [string, unknown, unknown, unknown];
  const keyOk = sort.endsWith('size') ? Number.isSafeInteger(key) : sort.endsWith('name') ? typeof key === 'string' && key.length <= 1024 : key === null;
  if (!keyOk || !isListId(id, 'doc')) throw bad;
  if (digest !== scopeDigest(scope)) throw cursorRefused();
  return key === null ? { id } : { id, key: key as string | number };
}
