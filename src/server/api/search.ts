import { z } from 'zod';
import type { Actor } from '../../access/access-control.js';
import { AppError } from '../../core/errors.js';
import { SearchBody, type SearchBodyInput, type SearchQuery, toSearchQuery } from '../../search/query.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';
import { ErrorBody } from './schemas.js';

const SearchDocument = z
  .object({
    id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    path: z.string().optional().describe('the relative path it was synced from (`docsearch upload --sync`), when it has one'),
  })
  .meta({ id: 'SearchDocument' });

const SearchProject = z.object({ id: z.string(), name: z.string() }).meta({ id: 'SearchProject' });

const passageFields = {
  chunk_id: z.string(),
  score: z
    .number()
    .describe('ordering score within this search: half the cosine similarity and half the BM25 score, each scaled by its list\'s best (0..1), or the reranker\'s'),
  scores: z
    .object({
      vector: z.object({ rank: z.number().int(), similarity: z.number() }).optional().describe('rank in the vector list and cosine similarity'),
      keyword: z.object({ rank: z.number().int(), bm25: z.number() }).optional().describe('rank in the keyword list and BM25 score'),
      rerank: z.number().optional().describe('the reranker\'s score, when one ran'),
    })
    .describe('what `score` came from'),
  text: z.string(),
  snippet: z
    .string()
    .describe('the sentence(s) of `text` that best answer the query, by meaning and by its words: a slice of `text`, whose range is one of `highlights` (show it first)'),
  highlights: z
    .array(z.tuple([z.number().int(), z.number().int()]))
    .describe('sorted, non-overlapping [start, end) UTF-16 offsets into text: the snippet and the query terms'),
  page_start: z.number().int().optional(),
  page_end: z.number().int().optional(),
  heading: z.string().optional().describe('the heading path in effect, outermost first, joined with " > "'),
  ocr: z.literal(true).optional().describe('present when the text was recognised by OCR from a scanned page (it may contain recognition errors)'),
  citation: z
    .object({
      unit: z.enum(['page', 'slide', 'row', 'chapter']).describe('what page_start–page_end count: PDF and image pages, PPTX/ODP slides, spreadsheet and CSV rows, EPUB chapters (in reading order)'),
      start: z.number().int(),
      end: z.number().int(),
      sheet: z.string().optional().describe('the sheet the rows are on (XLSX, ODS)'),
    })
    .optional()
    .describe('what the passage cites, for types that have such a unit (absent for DOCX, ODT, RTF, TXT, Markdown, HTML, e-mail: their `heading` is the citation)'),
};

const SearchPassage = z.object(passageFields).meta({ id: 'SearchPassage' });

const SearchResult = z.object({ ...passageFields, document: SearchDocument, project: SearchProject }).meta({ id: 'SearchResult' });

const DocumentResult = z
  .object({
    document: SearchDocument,
    project: SearchProject,
    score: z.number().describe('the document\'s score: its best passage\'s'),
    matches: z.number().int().describe('how many of its passages are in the result list'),
    passages: z.array(SearchPassage).describe('its best passages, best first (at most `passages_per_document`)'),
  })
  .meta({ id: 'DocumentResult' });

/** One value of a facet and its count: search's and the document list's (GET /documents?facets=). */
export const FacetValue = z
  .object({
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]).describe('what a filter of the same name takes: a type name, a project id, an e-mail, a year, a label name, a language, a metadata value'),
    count: z.number().int().describe("results of the whole list with this value: passages, or documents (a search's grouped by document, the document list)"),
    name: z.string().optional().describe("a project's name"),
    color: z.string().optional().describe("a label's colour"),
  })
  .meta({ id: 'FacetValue' });

const responseFields = {
  query: z.string(),
  took_ms: z.number().int(),
  total: z
    .object({
      value: z.number().int(),
      relation: z.enum(['eq', 'gte']).describe('eq: exactly `value`; gte: at least (a list stopped at its depth while still matching)'),
    })
    .describe('results (passages, or documents when grouped) over all pages; paging to the end returns `value` of them'),
  weak: z.boolean().describe('no keyword match and nothing close in meaning: the results are only the nearest few (at most 5), on one page'),
  next_cursor: z.string().nullable().describe('send it as `cursor` (with the same query) for the next page; null on the last page'),
  indexing: z.number().int().describe('documents in the searched scope still queued or being processed: results may be incomplete'),
  warnings: z.array(z.string()).optional().describe('e.g. the reranker failed and results are in fused order'),
  facets: z
    .record(z.string(), z.array(FacetValue))
    .optional()
    .describe(
      'with `facets` asked: per facet, the values of the whole result list (the list `total` counts, never only this page), most frequent first (at most 100). A result counts once under each value it has (a document under each of its labels); where `total` is `gte` the counts, like it, are of the list as read (an extra of docsearch: docs/api.md#facets)',
    ),
};

const PassagesResponse = z
  .object({ ...responseFields, results: z.array(SearchResult).describe('this page of passages, best first (`group` "none")') })
  .meta({ id: 'SearchResponse' });

const DocumentsResponse = z
  .object({ ...responseFields, documents: z.array(DocumentResult).describe('this page of documents, best first (`group` "document")') })
  .meta({ id: 'SearchDocumentsResponse' });

/**
 * A search as the actor may run it: over every project they read, or those of `project_ids`, and the documents of
 * `document_ids` — each of which they must be able to read, else a 404 naming it (never an empty answer that
 * reads as "no matches").
 */
export async function searchQueryFor(s: Services, actor: Actor, body: SearchBodyInput): Promise<SearchQuery> {
  const scope = await s.access.scope(actor, body.project_ids);
  if (body.document_ids) {
    const readable = new Set((await s.access.documents(actor, body.document_ids, 'read')).map((d) => d.id));
    const unknown = [...new Set(body.document_ids)].filter((id) => !readable.has(id));
    if (unknown.length > 0) throw new AppError('not_found', `document "${unknown[0]}" not found`, { details: { document_ids: unknown } });
  }
  return toSearchQuery(actor.userId, scope, body);
}

export const search = (s: Services) =>
  defineRoute({
    name: 'search',
    method: 'POST',
    path: '/search',
    scope: 'read:documents',
    tag: 'search',
    summary:
      'Hybrid semantic search over every project the caller may read (or those of `project_ids`): vector ∪ keyword, rank fusion, reranking, highlights; passages or documents, page by page. ' +
      '`filters` narrow it (type, upload time, path, uploader, source, labels, metadata: applied inside the index, never after it) and `facets` count the whole result list by field (extras of docsearch: docs/api.md#filters).',
    body: SearchBody,
    responses: {
      200: { description: 'A page of ranked results (possibly none): `results` (passages), or `documents` with group "document"', schema: z.union([PassagesResponse, DocumentsResponse]) },
      400: { description: 'Invalid body (the message names the field, a filter\'s unknown field, operator or type, or an unknown facet), or a cursor this server did not issue to the caller for this search', schema: ErrorBody },
      404: { description: 'A project or document of `project_ids` or `document_ids` the caller may not read (or that does not exist), named', schema: ErrorBody },
      409: { description: 'The index is being rebuilt for a new embedding model', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      return { status: 200, body: await s.search.search(await searchQueryFor(s, principal, body)) };
    },
  });
