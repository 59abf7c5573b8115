import { z } from 'zod';
import type { Library, WirePassage, WireSearchResponse } from '../library.js';
import { DEFAULT_SEARCH_LIMIT, MAX_PASSAGE_CHARS, MAX_SEARCH_LIMIT } from '../limits.js';
import { structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

const Passage = z.object({
  chunk_id: z.string(),
  text: z.string().describe('the passage; cut at ' + MAX_PASSAGE_CHARS + ' characters when `text_cut` is true'),
  text_cut: z.boolean().optional(),
  highlights: z.array(z.tuple([z.number().int(), z.number().int()])).describe('[start, end) offsets into text of the best sentence and the query terms'),
  score: z.number(),
  page_start: z.number().int().optional(),
  page_end: z.number().int().optional(),
  heading: z.string().optional().describe('the heading path the passage sits under'),
  ocr: z.boolean().optional().describe('recognised by OCR from a scanned page: may contain recognition errors'),
});

const DocumentRef = {
  document_id: z.string().describe('pass to get_document to read more of it'),
  filename: z.string(),
  path: z.string().optional(),
  project: z.object({ id: z.string(), name: z.string() }),
};

const output = {
  query: z.string(),
  weak: z.boolean().describe('true: nothing matched the words and nothing was close in meaning; these are only the nearest few, treat them with doubt'),
  total: z.object({ value: z.number().int(), relation: z.enum(['eq', 'gte']) }),
  next_cursor: z.string().nullable().describe('pass as `cursor` with the same query for the next page; null on the last page'),
  indexing: z.number().int().describe('documents still being processed: results may be incomplete'),
  warnings: z.array(z.string()).optional(),
  results: z.array(z.object({ ...DocumentRef, ...Passage.shape })).optional().describe('passages, best first (group "none")'),
  documents: z
    .array(z.object({ ...DocumentRef, score: z.number(), matches: z.number().int(), passages: z.array(Passage) }))
    .optional()
    .describe('documents with their best passages, best first (group "document")'),
};

function passage(p: WirePassage): z.infer<typeof Passage> {
  const cut = p.text.length > MAX_PASSAGE_CHARS;
  return {
    chunk_id: p.chunk_id,
    text: cut ? p.text.slice(0, MAX_PASSAGE_CHARS) : p.text,
    ...(cut ? { text_cut: true } : {}),
    highlights: cut ? p.highlights.filter(([, end]) => end <= MAX_PASSAGE_CHARS) : p.highlights,
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
    ...(r.results ? { results: r.results.map((x) => ({ ...documentRef(x.document, x.project), ...passage(x) })) } : {}),
    ...(r.documents
      ? { documents: r.documents.map((d) => ({ ...documentRef(d.document, d.project), score: d.score, matches: d.matches, passages: d.passages.map(passage) })) }
      : {}),
  };
}

export const searchTool: ToolDefinition = {
  name: 'search',
  config: {
    title: 'Search documents',
    description:
      "Search the user's document library (PDFs, Word files, text) by meaning and by keywords at once, and get the best-matching " +
      'passages with their document, project and page. Use it first for any question the user\'s own documents may answer; ' +
      'then read around a hit with get_document. Phrase the query as the answer would be written. If `weak` is true, ' +
      'nothing really matched: say so rather than rely on the passages.',
    inputSchema: {
      query: z.string().trim().min(1).max(2000).describe('what to look for, in natural language or keywords'),
      project_id: z.string().min(1).max(100).optional().describe('only this project (ids from list_projects)'),
      mode: z.enum(['hybrid', 'vector', 'keyword']).default('hybrid').describe('hybrid (default) combines meaning and exact words; keyword for exact names, codes, numbers'),
      limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT).describe('results on this page'),
      group: z.enum(['none', 'document']).default('none').describe('none: a flat list of passages; document: one entry per document with its best passages'),
      cursor: z.string().min(1).max(10_000).optional().describe('next_cursor of the previous page, with the same query and options'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as { query: string; project_id?: string; mode: 'hybrid' | 'vector' | 'keyword'; limit: number; group: 'none' | 'document'; cursor?: string };
    const response = await library.search({
      query: a.query,
      limit: a.limit,
      mode: a.mode,
      group: a.group,
      ...(a.project_id ? { project_ids: [a.project_id] } : {}),
      ...(a.cursor ? { cursor: a.cursor } : {}),
    });
    return structured(toOutput(response));
  },
};
