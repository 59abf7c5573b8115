import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { assembleText, readChunks, windowEnd } from './document-text.js';
import { type Library, LibraryError } from './library.js';
import { MAX_LIST_LIMIT, MAX_WINDOW_CHARS } from './limits.js';

const SCHEME = 'docsearch://documents/';
export const DOCUMENT_TEMPLATE = `${SCHEME}{id}`;

export const documentUri = (id: string) => SCHEME + encodeURIComponent(id);

function idOf(uri: string): string {
  if (!uri.startsWith(SCHEME)) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}: documents are ${DOCUMENT_TEMPLATE}`);
  return decodeURIComponent(uri.slice(SCHEME.length));
}

/** A library refusal as the protocol error a resource request answers with (resources have no tool-error form). */
async function asProtocolError<T>(work: () => Promise<T>, report: (err: unknown) => void): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof McpError) throw err;
    if (err instanceof LibraryError) throw new McpError(err.status === 404 ? -32002 : ErrorCode.InvalidParams, err.message);
    report(err);
    throw new McpError(ErrorCode.InternalError, 'reading the resource failed on the server');
  }
}

/**
 * Each document as a resource, `docsearch://documents/{id}`, listed a page at a time (the SDK's McpServer lists
 * template resources in one go, so these handlers sit on the protocol server directly). A read returns the
 * text up to MAX_WINDOW_CHARS and says where it was cut; get_document reads on from there.
 */
export function registerDocumentResources(server: Server, library: Library, report: (err: unknown) => void): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: DOCUMENT_TEMPLATE,
        name: 'document',
        title: 'A document of the library',
        description: 'The text of one document, by id (ids come from search, list_documents or resources/list)',
        mimeType: 'text/plain',
      },
    ],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, (request) =>
    asProtocolError(async () => {
      const cursor = request.params?.cursor;
      const page = await library.listDocuments({ limit: MAX_LIST_LIMIT, status: 'ready', ...(cursor ? { cursor } : {}) });
      return {
        resources: page.documents.map((d) => ({ uri: documentUri(d.id), name: d.filename, mimeType: 'text/plain', size: d.size_bytes })),
        ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
      };
    }, report),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    asProtocolError(async () => {
      const uri = request.params.uri;
      const document = await library.getDocument(idOf(uri));
      if (document.status !== 'ready') {
        return { contents: [{ uri, mimeType: 'text/plain', text: `(${document.filename} is ${document.status}${document.error ? `: ${document.error}` : ''})` }] };
      }
      const text = assembleText(await readChunks(library, document.id));
      const end = windowEnd(text, 0, MAX_WINDOW_CHARS);
      const shown = end < text.length ? `${text.slice(0, end)}\n\n[cut at ${end} of ${text.length} characters: call get_document with offset ${end} to read on]` : text;
      return { contents: [{ uri, mimeType: 'text/plain', text: shown }] };
    }, report),
  );
}
