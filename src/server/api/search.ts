import { z } from 'zod';
import { notFound } from '../../core/errors.js';
import { SearchBody, toSearchQuery } from '../../search/query.js';
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
  highlights: z
    .array(z.tuple([z.number().int(), z.number().int()]))
    .describe('sorted, non-overlapping [start, end) UTF-16 offsets into text: the best-matching sentence and query terms'),
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
};

const PassagesResponse = z
  .object({ ...responseFields, results: z.array(SearchResult).describe('this page of passages, best first (`group` "none")') })
  .meta({ id: 'SearchResponse' });

const DocumentsResponse = z
  .object({ ...responseFields, documents: z.array(DocumentResult).describe('this page of documents, best first (`group` "document")') })
  .meta({ id: 'SearchDocumentsResponse' });

/** Filter ids that are not the caller's would narrow the search to nothing, as if nothing matched: a 404 naming the first. */
async function requireOwnIds(s: Services, userId: string, body: { project_ids?: string[]; document_ids?: string[] }): Promise<void> {
  if (body.project_ids?.length) {
    const own = new Set((await s.projects.names(userId, [...new Set(body.project_ids)])).map((p) => p.id));
    const missing = body.project_ids.find((id) => !own.has(id));
    if (missing !== undefined) throw notFound(`project "${missing}"`);
  }
  if (body.document_ids?.length) {
    const own = new Set((await s.documents.getMany(userId, [...new Set(body.document_ids)])).map((d) => d.id));
    const missing = body.document_ids.find((id) => !own.has(id));
    if (missing !== undefined) throw notFound(`document "${missing}"`);
  }
}

export const search = (s: Services) =>
  defineRoute({
    name: 'search',
    method: 'POST',
    path: '/search',
    scope: 'read:documents',
    tag: 'search',
    summary: "Hybrid semantic search over the caller's chunks: vector ∪ keyword, rank fusion, reranking, highlights; passages or documents, page by page.",
    body: SearchBody,
    responses: {
      200: { description: 'A page of ranked results (possibly none): `results` (passages), or `documents` with group "document"', schema: z.union([PassagesResponse, DocumentsResponse]) },
      400: { description: 'Invalid body (the message names the field), or a cursor this server did not issue to the caller for this search', schema: ErrorBody },
      404: { description: 'An id in `project_ids` or `document_ids` that is not one of the caller\'s (the message names it)', schema: ErrorBody },
      409: { description: 'The index is being rebuilt for a new embedding model', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      await requireOwnIds(s, principal.userId, body);
      return { status: 200, body: await s.search.search(toSearchQuery(principal.userId, body)) };
    },
  });
