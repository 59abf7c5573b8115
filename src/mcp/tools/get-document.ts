import { z } from 'zod';
import { assembleText, chunksOnPages, readChunks, windowEnd } from '../document-text.js';
import { type Library, LibraryError, type WireDocument } from '../library.js';
import { DEFAULT_WINDOW_CHARS, MAX_WINDOW_CHARS } from '../limits.js';
import { structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

export const DocumentSummary = z.object({
  id: z.string(),
  filename: z.string(),
  project_id: z.string(),
  content_type: z.string(),
  status: z.enum(['queued', 'processing', 'ready', 'failed']),
  pages: z.number().int().nullable(),
  size_bytes: z.number().int(),
  path: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
});

export const summary = (d: WireDocument): z.infer<typeof DocumentSummary> => ({
  id: d.id,
  filename: d.filename,
  project_id: d.project_id,
  content_type: d.content_type,
  status: d.status,
  pages: d.pages,
  size_bytes: d.size_bytes,
  path: d.path,
  error: d.error,
  created_at: d.created_at,
});

const output = {
  document: DocumentSummary,
  text: z.string().describe('this window of the text; a line "[page N]" marks where each page starts'),
  offset: z.number().int().describe('where this window starts, in characters from the start of the document (or of the pages asked)'),
  end: z.number().int().describe('where it ends'),
  total_chars: z.number().int().describe('length of the whole text (or of the pages asked)'),
  next_offset: z.number().int().nullable().describe('pass as `offset` (with the same pages, if any) to read on; null at the end'),
  cut: z.boolean().describe('true when the window stopped at max_chars before the end'),
  note: z.string().optional(),
};

interface Args {
  document_id: string;
  page_from?: number;
  page_to?: number;
  offset?: number;
  max_chars: number;
}

export const getDocumentTool: ToolDefinition = {
  name: 'get_document',
  config: {
    title: 'Read a document',
    description:
      "Read the text of one of the user's documents, by id (from search or list_documents). Long documents come in windows: " +
      'read on by passing `next_offset` as `offset` until it is null, or ask for pages with page_from/page_to (PDFs). ' +
      'Use it to read around a search hit (page_from = the hit\'s page) or to read a short document whole.',
    inputSchema: {
      document_id: z.string().min(1).max(100),
      page_from: z.number().int().min(1).optional().describe('first page to read (PDFs): the text of the passages on these pages; a passage that runs across pages comes whole'),
      page_to: z.number().int().min(1).optional().describe('last page to read (inclusive)'),
      offset: z.number().int().min(0).optional().describe('character offset to start at: a previous call\'s next_offset, with the same pages'),
      max_chars: z.number().int().min(100).max(MAX_WINDOW_CHARS).default(DEFAULT_WINDOW_CHARS).describe('most characters to return'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as unknown as Args;
    if (a.page_from !== undefined && a.page_to !== undefined && a.page_to < a.page_from) {
      throw new LibraryError(400, 'invalid_request', 'page_to must not be before page_from');
    }
    const document = await library.getDocument(a.document_id);
    if (document.status !== 'ready') {
      const note =
        document.status === 'failed'
          ? `the document failed to process: ${document.error ?? 'no reason recorded'}`
          : `the document is ${document.status}: its text is available once it is ready`;
      return structured({ document: summary(document), text: '', offset: 0, end: 0, total_chars: 0, next_offset: null, cut: false, note });
    }
    const all = await readChunks(library, document.id);
    const paged = a.page_from !== undefined || a.page_to !== undefined;
    const chunks = paged ? chunksOnPages(all, a.page_from, a.page_to) : all;
    if (paged && chunks.length === 0) {
      const last = all.reduce((n, c) => Math.max(n, c.page_end ?? c.page_start ?? 0), 0);
      throw new LibraryError(400, 'invalid_request', last === 0 ? 'this document has no pages: read it by offset instead' : `page ${a.page_from ?? a.page_to} is past the document's last page (${last})`);
    }
    const text = assembleText(chunks);
    const start = Math.min(a.offset ?? 0, text.length);
    const end = windowEnd(text, start, a.max_chars);
    const cut = end < text.length;
    return structured({
      document: summary(document),
      text: text.slice(start, end),
      offset: start,
      end,
      total_chars: text.length,
      next_offset: cut ? end : null,
      cut,
    });
  },
};
