import { z } from 'zod';
import type { Library } from '../library.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../limits.js';
import { structured } from '../tool-result.js';
import { DocumentSummary, summary } from './get-document.js';
import type { ToolDefinition } from './tool.js';

const output = {
  documents: z.array(DocumentSummary),
  next_cursor: z.string().nullable().describe('pass as `cursor` (with the same filters) for the next page; null on the last page'),
};

export const listDocumentsTool: ToolDefinition = {
  name: 'list_documents',
  config: {
    title: 'List documents',
    description:
      "List the user's documents, in upload order, optionally only one project's, only those in a status, or only those whose file name " +
      'contains some text. Use it to find a document by name, or to see what the library holds; search is better for finding by content.',
    inputSchema: {
      project_id: z.string().min(1).max(100).optional(),
      status: z.enum(['queued', 'processing', 'ready', 'failed']).optional(),
      name: z.string().min(1).max(255).optional().describe('part of the file name, any case'),
      limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
      cursor: z.string().min(1).max(400).optional(),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as { project_id?: string; status?: 'queued' | 'processing' | 'ready' | 'failed'; name?: string; limit: number; cursor?: string };
    const page = await library.listDocuments({
      limit: a.limit,
      ...(a.project_id ? { project_id: a.project_id } : {}),
      ...(a.status ? { status: a.status } : {}),
      ...(a.name ? { filename: a.name } : {}),
      ...(a.cursor ? { cursor: a.cursor } : {}),
    });
    return structured({ documents: page.documents.map(summary), next_cursor: page.next_cursor });
  },
};
