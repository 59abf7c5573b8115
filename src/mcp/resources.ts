import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readWindow } from './document-text.js';
import { type Library, LibraryError } from './library.js';
import { MAX_LIST_LIMIT, MAX_WINDOW_CHARS } from './limits.js';
import { protocolError } from './protocol-errors.js';

/** MCP's "resource not found" (2025-11-25 §resources, error handling). */
const RESOURCE_NOT_FOUND = -32002;

const SCHEME = 'docsearch://documents/';
export const DOCUMENT_TEMPLATE = `${SCHEME}{id}`;

export const documentUri = (id: string) => SCHEME + encodeURIComponent(id);

function idOf(uri: string): string {
  if (!uri.startsWith(SCHEME)) throw protocolError(ErrorCode.InvalidParams, `unknown resource ${uri}: documents are ${DOCUMENT_TEMPLATE}`);
  try {
    return decodeURIComponent(uri.slice(SCHEME.length));
  } catch {
    // A broken %-escape is the caller's, not a failure of the server to report.
    throw protocolError(ErrorCode.InvalidParams, `unknown resource ${uri}: its id is not valid percent-encoding`);
  }
}

/** A library refusal as the protocol error a resource request answers with (resources have no tool-error form). */
async function asProtocolError<T>(work: () => Promise<T>, report: (err: unknown) => void): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof LibraryError) throw protocolError(err.status === 404 ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, `${err.message} (${err.code})`);
    if (err instanceof Error && Number.isInteger((err as { code?: unknown }).code)) throw err;
    report(err);
    throw protocolError(ErrorCode.InternalError, 'reading the resource failed on the server');
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
        // No `size`: it would be the text's, which only reading every chunk tells (the file's size is not it).
        resources: page.documents.map((d) => ({ uri: documentUri(d.id), name: d.filename, mimeType: 'text/plain' })),
        ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
      };
    }, report),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    asProtocolError(async () => {
      const uri = request.params.uri;
      const document = await library.getDocument(idOf(uri));
      const window = await readWindow(library, document, { max_chars: MAX_WINDOW_CHARS });
      const text = window.note && !window.text ? `(${document.filename}: ${window.note})` : window.text;
      const shown = window.cut ? `${text}\n\n[cut at ${window.end} of ${window.total_chars} characters: call get_document with offset ${window.end} to read on]` : text;
      return { contents: [{ uri, mimeType: 'text/plain', text: shown }] };
    }, report),
  );
}
