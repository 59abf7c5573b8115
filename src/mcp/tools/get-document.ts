import { z } from 'zod';
import { MAX_FILENAME_CHARS } from '../../core/name-limits.js';
import { readWindow } from '../document-text.js';
import { findDocument } from '../find-document.js';
import { type Library, LibraryError } from '../library.js';
import { DEFAULT_WINDOW_CHARS, MAX_WINDOW_CHARS } from '../limits.js';
import { structured } from '../tool-result.js';
import { DocumentSummary, requireDocument, summaries } from './document-summary.js';
import type { ToolDefinition } from './tool.js';

/** What get_document and get_documents say of a window of text. */
export const WindowFields = {
  text: z.string().describe('this window of the text; a line "[page N]" ("[slide N]", "[row N]", "[chapter N]") marks where each starts'),
  offset: z.number().int().describe('where this window starts, in characters from the start of the text (or of the pages asked)'),
  end: z.number().int().describe('where it ends'),
  total_chars: z.number().int().describe('length of the whole text (or of the pages asked)'),
  next_offset: z.union([z.number().int().min(0), z.null()]).describe('pass as `offset` (with the same pages, if any) to read on; null at the end'),
  cut: z.boolean().describe('true when the window stopped at max_chars before the end'),
  note: z.string().optional().describe('why there is no text (not ready, failed), or how it was read'),
};

export const PAGE_MEANING = 'pages of a PDF or image, slides of a presentation, rows of a spreadsheet or CSV (the sheet is the heading), chapters of an EPUB';

interface Args {
  document_id?: string;
  filename?: string;
  path?: string;
  page_from?: number;
  page_to?: number;
  offset?: number;
  max_chars: number;
}

export const getDocumentTool: ToolDefinition = {
  name: 'get_document',
  scope: 'read:documents',
  config: {
    title: 'Read a document',
    description:
      "Read the text of one of the user's documents, by id (from search or list_documents), file name or path. Long documents come in " +
      'windows: read on by passing `next_offset` as `offset` until it is null, or ask for pages with page_from/page_to ' +
      `(${PAGE_MEANING}). Use it to read around a search hit (page_from = the hit's page_start) or to read a short document whole. ` +
      'When no document has the name, the error lists the nearest names.',
    inputSchema: {
      document_id: z.string().min(1).max(100).optional().describe('the document\'s id; or give filename or path instead'),
      filename: z.string().min(1).max(MAX_FILENAME_CHARS).optional().describe('the document\'s file name exactly, e.g. "lease.pdf" (any case when only one matches)'),
      path: z.string().min(1).max(1024).optional().describe('the relative path it was uploaded or synced from, e.g. "contracts/lease.pdf"'),
      page_from: z.number().int().min(1).optional().describe(`first page to read (${PAGE_MEANING})`),
      page_to: z.number().int().min(1).optional().describe('last page to read (inclusive)'),
      offset: z.number().int().min(0).optional().describe('character offset to start at: a previous call\'s next_offset, with the same pages'),
      max_chars: z.number().int().min(100).max(MAX_WINDOW_CHARS).default(DEFAULT_WINDOW_CHARS).describe(`most characters to return (100–${MAX_WINDOW_CHARS})`),
    },
    outputSchema: { document: DocumentSummary, ...WindowFields },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as unknown as Args;
    const given = [a.document_id, a.filename, a.path].filter((x) => x !== undefined).length;
    if (given !== 1) throw new LibraryError(400, 'invalid_request', 'give exactly one of document_id, filename or path');
    if (a.page_from !== undefined && a.page_to !== undefined && a.page_to < a.page_from) {
      throw new LibraryError(400, 'invalid_request', 'page_to must not be before page_from');
    }
    const document =
      a.document_id !== undefined ? await requireDocument(library, a.document_id) : await findDocument(library, a.filename !== undefined ? { filename: a.filename } : { path: a.path! });
    const window = await readWindow(library, document, a);
    const [shown] = await summaries(library, [document]);
    return structured({ document: shown!, ...window });
  },
};
