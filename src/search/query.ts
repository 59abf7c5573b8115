/**
 * The validated search query: the wire schema of POST /api/v1/search (zod, so validation, types and the
 * OpenAPI entry come from one place) and the normalised object the pipeline runs on.
 */
import { z } from 'zod';
import { type DocumentFilters, Facets, Filters, normalFilters } from '../core/filters.js';
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from '../core/search-limits.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export const SEARCH_GROUPS = ['none', 'document'] as const;
export type SearchGroup = (typeof SEARCH_GROUPS)[number];

export const MAX_PASSAGES_PER_DOCUMENT = 5;
const MAX_FILTER_IDS = 1000;
/** A cursor grows by 4 bytes a result shown (cursor.ts): ~6,500 characters after the longest list. */
const MAX_CURSOR_CHARS = 10_000;

const Id = z.string().min(1).max(100);

export const SearchBody = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
    .describe(`what to look for, in natural language (1..${MAX_QUERY_CHARS} characters after trimming)`),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10).describe(`most results (passages, or documents when grouped) on this page (1..${MAX_SEARCH_LIMIT})`),
  project_ids: z.array(Id).max(MAX_FILTER_IDS).optional().describe('only chunks of these projects (an id that is not the caller\'s is a 404)'),
  document_ids: z.array(Id).max(MAX_FILTER_IDS).optional().describe('only chunks of these documents (an id that is not the caller\'s is a 404)'),
  mode: z.enum(SEARCH_MODES).default('hybrid').describe('hybrid: vector ∪ keyword, their scores fused; vector or keyword alone'),
  rerank: z.boolean().default(true).describe('apply the configured reranker to the top candidates'),
  group: z
    .enum(SEARCH_GROUPS)
    .default('none')
    .describe('none: a flat list of passages (`results`); document: one entry per document with its best passages (`documents`)'),
  passages_per_document: z
    .number()
    .int()
    .min(1)
    .max(MAX_PASSAGES_PER_DOCUMENT)
    .default(3)
    .describe('with group "document": most passages shown per document (1..5), best first'),
  cursor: z
    .string()
    .min(1)
    .max(MAX_CURSOR_CHARS)
    .optional()
    .describe('the previous page\'s `next_cursor`, sent with the same query, filters, mode and group; absent for the first page'),
  filters: Filters.optional(),
  facets: Facets.optional(),
});

export type SearchBodyInput = z.infer<typeof SearchBody>;

export interface SearchQuery {
  /** Whose search it is: a page's cursor works only for them. */
  userId: string;
  /** The projects searched: those the caller may read, narrowed to `projectIds` when asked (access/ decides). */
  scope: string[];
  query: string;
  limit: number;
  /** The projects the request named (part of what a cursor is bound to), or none. */
  projectIds?: string[];
  documentIds?: string[];
  mode: SearchMode;
  rerank: boolean;
  group: SearchGroup;
  passagesPerDocument: number;
  cursor?: string;
  /** Narrow to documents matching these (core/filters.ts); part of what a cursor is bound to. */
  filters?: DocumentFilters;
  /** Facets to count over the whole result list (facets.ts). */
  facets?: string[];
}

export function toSearchQuery(userId: string, scope: string[], body: SearchBodyInput): SearchQuery {
  const q: SearchQuery = {
    userId,
    scope,
    query: body.query,
    limit: body.limit,
    mode: body.mode,
    rerank: body.rerank,
    group: body.group,
    passagesPerDocument: body.passages_per_document,
  };
  if (body.project_ids) q.projectIds = [...new Set(body.project_ids)];
  if (body.document_ids) q.documentIds = [...new Set(body.document_ids)];
  if (body.cursor) q.cursor = body.cursor;
  const filters = normalFilters(body.filters);
  if (filters) q.filters = filters;
  if (body.facets?.length) q.facets = [...new Set(body.facets)];
  return q;
}
