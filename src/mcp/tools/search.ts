import { z } from 'zod';
import { cutUnits } from '../../core/code-points.js';
import { Filters, type FiltersInput } from '../../core/filters.js';
import { MAX_QUERY_CHARS } from '../../core/search-limits.js';
import { type Library, LibraryError, type WirePassage, type WireSearchResponse } from '../library.js';
import { DEFAULT_SEARCH_LIMIT, MAX_FILTER_IDS, MAX_PASSAGE_CHARS, MAX_SEARCH_LIMIT } from '../limits.js';
import { structured } from '../tool-result.js';
import { requireDocument, requireProject } from './document-summary.js';
import { facetCounts, facetsInput } from './facet-counts.js';
import { PAGE_MEANING } from './get-document.js';
import type { ToolDefinition } from './tool.js';

const SCORE = 'how well it matches, for ordering this search\'s results only (not comparable across searches): half meaning, half keywords, each scaled by its list\'s best (0–1), or the reranker\'s score';

const Passage = z.object({
  chunk_id: z.string(),
  snippet: z.string().describe('the sentence(s) of the passage that best answer the query: read it first'),
  text: z.string().describe('the passage; cut at ' + MAX_PASSAGE_CHARS + ' characters when `text_cut` is true'),
  text_cut: z.boolean().optional(),
  highlights: z.array(z.tuple([z.number().int(), z.number().int()])).describe('[start, end) offsets into text of the snippet and the query terms'),
  score: z.number().describe(SCORE),
  page_start: z.number().int().optional().describe(`where the passage starts: ${PAGE_MEANING}; absent for types without`),
  page_end: z.number().int().optional().describe('where it ends (inclusive)'),
  heading: z.string().optional().describe('the heading path the passage sits under'),
  ocr: z.boolean().optional().describe('recognised by OCR from a scanned page: may contain recognition errors'),
});

const DocumentRef = {
  document_id: z.string().describe('pass to get_document to read more of it'),
  filename: z.string(),
  path: z.string().optional().describe('the relative path it was uploaded or synced from'),
  project: z.object({ id: z.string(), name: z.string() }),
};

const output = {
  query: z.string().describe('the query as searched (trimmed)'),
  weak: z.boolean().describe('true: nothing matched the words and nothing was close in meaning; these are only the nearest few, treat them with doubt'),
  total: z
    .object({ value: z.number().int(), relation: z.enum(['eq', 'gte']) })
    .describe('how many results there are over all pages: exactly `value` (eq) or at least (gte)'),
  next_cursor: z.union([z.string().min(1), z.null()]).describe('pass as `cursor` with the same query for the next page; null on the last page'),
  indexing: z.number().int().describe('documents still being processed: results may be incomplete'),
  warnings: z.array(z.string()).optional().describe('e.g. the reranker failed and results are in fused order'),
  facets: facetCounts('the whole result list'),
  results: z.array(z.object({ ...DocumentRef, ...Passage.shape })).optional().describe('passages, best first (group "none")'),
  documents: z
    .array(
      z.object({
        ...DocumentRef,
        score: z.number().describe("its best passage's score"),
        matches: z.number().int().describe('how many of its passages matched'),
        passages: z.array(Passage).describe('its best passages, best first'),
      }),
    )
    .optional()
    .describe('documents with their best passages, best first (group "document")'),
};

function passage(p: WirePassage): z.infer<typeof Passage> {
  const text = cutUnits(p.text, MAX_PASSAGE_CHARS);
  const cut = text.length < p.text.length;
  return {
    chunk_id: p.chunk_id,
    snippet: p.snippet,
    text,
    ...(cut ? { text_cut: true } : {}),
    // A highlight across the cut is marked up to it.
    highlights: cut ? p.highlights.flatMap(([start, end]): [number, number][] => (start < text.length ? [[start, Math.min(end, text.length)]] : [])) : p.highlights,
    score: p.score,
    ...(p.page_start !== undefined ? { page_start: p.page_start } : {}),
    ...(p.page_end !== undefined ? { page_end: p.page_end } : {}),
    ...(p.heading !== undefined ? { heading: p.heading } : {}),
    ...(p.ocr ? { ocr: true } : {}),
  };
}

const documentRef = (d: { id: string; filename: string; path?: string }, project: { id: string; name: string }) => ({
  document_id: d.id,
  filename: d.filename,
  ...(d.path ? { path: d.path } : {}),
  project: { id: project.id, name: project.name },
});

function toOutput(r: WireSearchResponse) {
  return {
    query: r.query,
    weak: r.weak,
    total: r.total,
    next_cursor: r.next_cursor,
    indexing: r.indexing,
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
    ...(r.facets ? { facets: r.facets } : {}),
    ...(r.results ? { results: r.results.map((x) => ({ ...documentRef(x.document, x.project), ...passage(x) })) } : {}),
    ...(r.documents
      ? { documents: r.documents.map((d) => ({ ...documentRef(d.document, d.project), score: d.score, matches: d.matches, passages: d.passages.map(passage) })) }
      : {}),
  };
}

export const searchTool: ToolDefinition = {
  name: 'search',
  scope: 'read:documents',
  config: {
    title: 'Search documents',
    description:
      "Search the user's document library (PDF, Word and OpenDocument files, slides, spreadsheets, e-books, web pages, e-mails, " +
      'Markdown and text, scans read by OCR) by meaning and by keywords at once, and get the best-matching ' +
      'passages with their document, project and page. Use it first for any question the user\'s own documents may answer; ' +
      'then read around a hit with get_document. Phrase the query as the answer would be written. If `weak` is true, ' +
      'nothing really matched: say so rather than rely on the passages.',
    inputSchema: {
      query: z.string().trim().min(1).max(MAX_QUERY_CHARS).describe('what to look for, in natural language or keywords'),
      project_id: z.string().min(1).max(100).optional().describe('only this project (an id from list_projects); the same as project_ids with one id'),
      project_ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_FILTER_IDS).optional().describe('only these projects (ids from list_projects)'),
      document_ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_FILTER_IDS).optional().describe('only these documents (ids from search or list_documents)'),
      mode: z.enum(['hybrid', 'vector', 'keyword']).default('hybrid').describe('hybrid (default) combines meaning and exact words; keyword for exact names, codes, numbers'),
      limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT).describe('results on this page'),
      group: z.enum(['none', 'document']).default('none').describe('none: a flat list of passages; document: one entry per document with its best passages'),
      cursor: z.string().min(1).max(10_000).optional().describe('next_cursor of the previous page, with the same query and options'),
      filters: Filters.optional().describe(
        'narrow to documents matching every field given: type (pdf, docx, markdown, email …), uploaded_since / uploaded_before (2026-03-31), path_prefix, uploaded_by (e-mails), source_id, labels (names: all of them), language (en, de …), metadata ({key: value}, {key: {"$gte": 2020}}, {key: {"$exists": true}})',
      ),
      facets: facetsInput('the whole result list'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as {
      query: string;
      project_id?: string;
      project_ids?: string[];
      document_ids?: string[];
      mode: 'hybrid' | 'vector' | 'keyword';
      limit: number;
      group: 'none' | 'document';
      cursor?: string;
      filters?: FiltersInput;
      facets?: string[];
    };
    if (a.project_id !== undefined && a.project_ids !== undefined) throw new LibraryError(400, 'invalid_request', 'give project_id or project_ids, not both');
    const projectIds = a.project_ids ? [...new Set(a.project_ids)] : a.project_id !== undefined ? [a.project_id] : undefined;
    const documentIds = a.document_ids ? [...new Set(a.document_ids)] : undefined;
    // An id that is not the caller's would only narrow the search to nothing: it is an error that names it.
    for (const id of projectIds ?? []) await requireProject(library, id);
    for (const id of documentIds ?? []) await requireDocument(library, id);
    const response = await library.search({
      query: a.query,
      limit: a.limit,
      mode: a.mode,
      group: a.group,
      ...(projectIds ? { project_ids: projectIds } : {}),
      ...(documentIds ? { document_ids: documentIds } : {}),
      ...(a.cursor ? { cursor: a.cursor } : {}),
      ...(a.filters ? { filters: a.filters } : {}),
      ...(a.facets?.length ? { facets: a.facets } : {}),
    });
    return structured(toOutput(response));
  },
};
