import { z } from 'zod';
import { Filters, type FiltersInput } from '../../core/filters.js';
import { MAX_FILENAME_CHARS } from '../../core/name-limits.js';
import type { Library } from '../library.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../limits.js';
import { structured } from '../tool-result.js';
import { DocumentSummary, requireProject, summaries } from './document-summary.js';
import { facetCounts, facetsInput } from './facet-counts.js';
import type { ToolDefinition } from './tool.js';

const output = {
  documents: z.array(DocumentSummary),
  next_cursor: z.union([z.string().min(1), z.null()]).describe('pass as `cursor` (with the same filters) for the next page; null on the last page'),
  facets: facetCounts('the documents of the whole list'),
};

export const listDocumentsTool: ToolDefinition = {
  name: 'list_documents',
  scope: 'read:documents',
  config: {
    title: 'List documents',
    description:
      "List the user's documents, in upload order, optionally only one project's, only those in a status, or only those whose file name " +
      'contains some text, or only those `filters` match (type, labels, metadata, uploader, path, upload time); `facets` counts the whole list by type, label, year … Use it to find a document by name, or to see what the library holds; search is better for finding by content.',
    inputSchema: {
      project_id: z.string().min(1).max(100).optional().describe('only this project\'s documents (an id from list_projects)'),
      status: z.enum(['queued', 'processing', 'ready', 'failed']).optional().describe('only documents in this state (ready: searchable)'),
      name: z.string().min(1).max(MAX_FILENAME_CHARS).optional().describe('part of the file name, any case'),
      limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT).describe(`documents on this page (1–${MAX_LIST_LIMIT})`),
      cursor: z.string().min(1).max(400).optional().describe('next_cursor of the previous page, with the same filters'),
      filters: Filters.optional().describe(
        "narrow to documents matching every field given, as search's `filters`: type, uploaded_since / uploaded_before, path_prefix, uploaded_by, source_id, labels, language, metadata",
      ),
      facets: facetsInput('the whole list (every page)'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as { project_id?: string; status?: 'queued' | 'processing' | 'ready' | 'failed'; name?: string; limit: number; cursor?: string; filters?: FiltersInput; facets?: string[] };
    if (a.project_id !== undefined) await requireProject(library, a.project_id);
    const page = await library.listDocuments({
      limit: a.limit,
      ...(a.project_id ? { project_id: a.project_id } : {}),
      ...(a.status ? { status: a.status } : {}),
      ...(a.name ? { filename: a.name } : {}),
      ...(a.cursor ? { cursor: a.cursor } : {}),
      ...(a.filters ? { filters: a.filters } : {}),
      ...(a.facets?.length ? { facets: a.facets } : {}),
    });
    return structured({ documents: await summaries(library, page.documents), next_cursor: page.next_cursor, ...(page.facets ? { facets: page.facets } : {}) });
  },
};
