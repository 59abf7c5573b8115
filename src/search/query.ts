/**
 * The validated search query: the wire schema of POST /api/v1/search (zod, so validation, types and the
 * OpenAPI entry come from one place) and the normalised object the pipeline runs on.
 */
import { z } from 'zod';

export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export const MAX_QUERY_CHARS = 2000;
export const MAX_LIMIT = 100;
const MAX_FILTER_IDS = 1000;

const Id = z.string().min(1).max(100);

export const SearchBody = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
    .describe('what to look for, in natural language (1..2000 characters after trimming)'),
  limit: z.number().int().min(1).max(MAX_LIMIT).default(10).describe('most results to return (1..100)'),
  project_ids: z.array(Id).max(MAX_FILTER_IDS).optional().describe('only chunks of these projects (ids of other users match nothing)'),
  document_ids: z.array(Id).max(MAX_FILTER_IDS).optional().describe('only chunks of these documents (ids of other users match nothing)'),
  mode: z.enum(SEARCH_MODES).default('hybrid').describe('hybrid: vector ∪ keyword with rank fusion; vector or keyword alone'),
  rerank: z.boolean().default(true).describe('apply the configured reranker to the top candidates'),
});

export type SearchBodyInput = z.infer<typeof SearchBody>;

export interface SearchQuery {
  userId: string;
  query: string;
  limit: number;
  projectIds?: string[];
  documentIds?: string[];
  mode: SearchMode;
  rerank: boolean;
}

export function toSearchQuery(userId: string, body: SearchBodyInput): SearchQuery {
  const q: SearchQuery = { userId, query: body.query, limit: body.limit, mode: body.mode, rerank: body.rerank };
  if (body.project_ids) q.projectIds = [...new Set(body.project_ids)];
  if (body.document_ids) q.documentIds = [...new Set(body.document_ids)];
  return q;
}
