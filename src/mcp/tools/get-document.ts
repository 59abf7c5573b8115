import { z } from 'zod';
import { assembleText, readChunks, windowEnd } from '../document-text.js';
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
  offset: z.number().int().describe('where this window starts in the whole text (characters)'),
  end: z.number().int().describe('where it ends'),
  total_chars: z.number().int(),
  next_offset: z.number().int().nullable().describe('pass as `offset` to read on; null when the window reached the end of what was asked'),
  cut: z.boolean().describe('true when the window stopped at max_chars before the end of what was asked'),
  note: z.string().optional(),
};

interface Args {
  document_id: string;
  page_from?: number;
  page_to?: number;
  offset?: number;
  max_chars: number;
}

/** The character range a page range covers (from the first asked page's start to the next page's). */
function pageRange(pages: { page: number; offset: number }[], length: number, from: number | undefined, to: number | undefined): [number, number] {
  if (pages.length === 0) throw new LibraryError(400, 'invalid_request', 'this document has no pages: read it by offset instead of page_from/page_to');
  const first = pages.find((p) => p.page >= (from ?? 1));
  if (!first) throw new LibraryError(400, 'invalid_request', `page ${from} is past the document's last page (${pages.at(-1)!.page})`);
  const after = to === undefined ? undefined : pages.find((p) => p.page > to);
  // The "[page N]" line of the page after the range is not part of it.
  const end = after ? after.offset - `\n\n[page ${after.page}]\n`.length : length;
  return [Math.max(0, first.offset - `[page ${first.page}]\n`.length), Math.max(end, first.offset)];
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
      page_from: z.number().int().min(1).optional().describe('first page to read (PDFs)'),
      page_to: z.number().int().min(1).optional().describe('last page to read (inclusive)'),
      offset: z.number().int().min(0).optional().describe('character offset to start at (a previous call\'s next_offset); within the pages asked, if any'),
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
    const { text, pages } = assembleText(await readChunks(library, document.id));
    const [rangeStart, rangeEnd] = a.page_from !== undefined || a.page_to !== undefined ? pageRange(pages, text.length, a.page_from, a.page_to) : [0, text.length];
    const start = Math.min(Math.max(a.offset ?? rangeStart, rangeStart), rangeEnd);
    const end = Math.min(windowEnd(text, start, a.max_chars), rangeEnd);
    const cut = end < rangeEnd;
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
