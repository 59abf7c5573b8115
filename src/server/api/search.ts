import { z } from 'zod';
import { SearchBody, toSearchQuery } from '../../search/query.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';
import { ErrorBody } from './schemas.js';

const SearchResult = z
  .object({
    chunk_id: z.string(),
    score: z.number().describe('ordering score within this response (rank fusion, or the reranker\'s); scales differ by mode and reranker'),
    scores: z
      .object({
        vector: z.object({ rank: z.number().int(), similarity: z.number() }).optional().describe('rank in the vector list and cosine similarity'),
        keyword: z.object({ rank: z.number().int(), bm25: z.number() }).optional().describe('rank in the keyword list and BM25 score'),
        rerank: z.number().optional().describe('the reranker\'s score, when one ran'),
      })
      .describe('what `score` came from'),
    text: z.string(),
    highlights: z
      .array(z.tuple([z.number().int(), z.number().int()]))
      .describe('sorted, non-overlapping [start, end) UTF-16 offsets into text: the best-matching sentence and query terms'),
    page_start: z.number().int().optional(),
    page_end: z.number().int().optional(),
    heading: z.string().optional(),
    ocr: z.literal(true).optional().describe('present when the text was recognised by OCR from a scanned page (it may contain recognition errors)'),
    document: z.object({ id: z.string(), filename: z.string(), content_type: z.string() }),
    project: z.object({ id: z.string(), name: z.string() }),
  })
  .meta({ id: 'SearchResult' });

const SearchResponse = z
  .object({
    query: z.string(),
    took_ms: z.number().int(),
    results: z.array(SearchResult),
    warnings: z.array(z.string()).optional().describe('e.g. the reranker failed and results are in fused order'),
  })
  .meta({ id: 'SearchResponse' });

export const search = (s: Services) =>
  defineRoute({
    name: 'search',
    method: 'POST',
    path: '/search',
    scope: 'read:documents',
    tag: 'search',
    summary: "Hybrid semantic search over the caller's chunks: vector ∪ keyword, rank fusion, reranking, highlights.",
    body: SearchBody,
    responses: {
      200: { description: 'Ranked results (possibly none)', schema: SearchResponse },
      400: { description: 'Invalid body (the message names the field)', schema: ErrorBody },
      409: { description: 'The index is being rebuilt for a new embedding model', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      return { status: 200, body: await s.search.search(toSearchQuery(principal.userId, body)) };
    },
  });
