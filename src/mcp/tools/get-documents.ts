import { z } from 'zod';
import { readWindow } from '../document-text.js';
import type { Library } from '../library.js';
import { DEFAULT_MULTI_CHARS, MAX_MULTI_DOCUMENTS, MAX_WINDOW_CHARS } from '../limits.js';
import { structured } from '../tool-result.js';
import { DocumentSummary, requireDocument, summaries } from './document-summary.js';
import { WindowFields } from './get-document.js';
import type { ToolDefinition } from './tool.js';

interface Args {
  document_ids: string[];
  max_chars: number;
}

export const getDocumentsTool: ToolDefinition = {
  name: 'get_documents',
  scope: 'read:documents',
  config: {
    title: 'Read several documents',
    description:
      "Read the text of several of the user's documents in one call, by id (from search or list_documents), in the order given, " +
      'within one budget of characters for them all. A document the budget does not reach whole is cut (`cut`, with `next_offset` ' +
      'for get_document), and those after it come without text; `cut_at` says where the budget ran out.',
    inputSchema: {
      document_ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_MULTI_DOCUMENTS).describe(`the documents' ids, 1–${MAX_MULTI_DOCUMENTS}`),
      max_chars: z.number().int().min(100).max(MAX_WINDOW_CHARS).default(DEFAULT_MULTI_CHARS).describe(`most characters of text in all (100–${MAX_WINDOW_CHARS})`),
    },
    outputSchema: {
      documents: z.array(z.object({ document: DocumentSummary, ...WindowFields })),
      cut_at: z
        .union([z.string().min(1), z.null()])
        .describe('the id of the first document that did not fit whole in max_chars (it and those after it are cut or empty), or null when all came whole'),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as unknown as Args;
    const ids = [...new Set(a.document_ids)];
    // Every id is checked before any text is read: an unknown one is an error naming it, not a missing entry.
    const documents = [];
    for (const id of ids) documents.push(await requireDocument(library, id));
    const shown = await summaries(library, documents);
    let left = a.max_chars;
    let cutAt: string | null = null;
    const out = [];
    for (const [i, document] of documents.entries()) {
      // Too little left to be worth a window: the document is named, its text left to get_document.
      if (left < 100) {
        cutAt ??= document.id;
        out.push({ document: shown[i]!, text: '', offset: 0, end: 0, total_chars: 0, next_offset: 0, cut: true, note: 'not read: max_chars was reached; read it with get_document' });
        continue;
      }
      const window = await readWindow(library, document, { max_chars: left });
      if (window.cut) cutAt ??= document.id;
      left -= window.text.length;
      out.push({ document: shown[i]!, ...window });
    }
    return structured({ documents: out, cut_at: cutAt });
  },
};
