import type { DocumentListFilter, Library, NewNote, WireDocument, WireDocumentPage, WireDocumentText, WireProject, WireSearchRequest, WireSearchResponse } from '../../mcp/library.js';
import { documentListQuery, LibraryError } from '../../mcp/library.js';
import { ApiError, AuthRequiredError, CliError } from '../../terminal/errors.js';
import * as CLI from '../api-types.js';
import type { ApiClient } from '../http.js';
import { NotDocsearchError, shape } from '../wire-shape.js';

/*
 * The answers as the tools read them: the CLI's shapes of the same routes (api-types.ts), in the library's types.
 * A server that answers otherwise is a tool error saying so, not a failure inside the tool.
 */
const PROJECT = shape<WireProject>(CLI.PROJECT.fields);
const PROJECT_PAGE = shape<{ projects: WireProject[]; next_cursor: string | null }>(CLI.PROJECT_PAGE.fields);
const DOCUMENT = shape<WireDocument>(CLI.DOCUMENT.fields);
const DOCUMENT_PAGE = shape<WireDocumentPage>(CLI.DOCUMENT_PAGE.fields);
const SEARCH_PASSAGES = shape<WireSearchResponse>(CLI.SEARCH_PASSAGES.fields);
const SEARCH_DOCUMENTS = shape<WireSearchResponse>(CLI.SEARCH_DOCUMENTS.fields);
const DOCUMENT_TEXT = shape<WireDocumentText>({ document_id: 'string', pages: [{ chunks: [{ id: 'string', text: 'string' }] }] });

/** Seconds the server may take to make a note searchable before add_document answers with its status. */
const NOTE_WAIT_S = 60;

/** The CLI's errors in the library's terms, with the hint that says what to do (log in, start the server). */
function asLibraryError(err: unknown): unknown {
  if (err instanceof ApiError) return new LibraryError(err.status, err.code, err.message);
  if (err instanceof NotDocsearchError) return new LibraryError(502, 'not_docsearch', `${err.message} (${err.hint})`);
  if (err instanceof AuthRequiredError) return new LibraryError(401, 'unauthorized', `${err.message}: ${err.hint ?? ''}`.replace(/: $/, ''));
  if (err instanceof CliError) return new LibraryError(503, 'unreachable', err.hint ? `${err.message} (${err.hint})` : err.message);
  return err;
}

async function mapped<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw asLibraryError(err);
  }
}

/** The library of `docsearch mcp`: any docsearch server's REST API, with the CLI's credentials. */
export class HttpLibrary implements Library {
  constructor(private readonly http: ApiClient) {}

  search(request: WireSearchRequest): Promise<WireSearchResponse> {
    // A search changes nothing, and a note's bytes are taken once per project: both asked again when they fail in flight.
    return mapped(this.http.post('/api/v1/search', request, { retry: true, shape: request.group === 'document' ? SEARCH_DOCUMENTS : SEARCH_PASSAGES }));
  }

  listProjects(page: { limit: number; cursor?: string }): Promise<{ projects: WireProject[]; next_cursor: string | null }> {
    return mapped(this.http.get('/api/v1/projects', { query: page, shape: PROJECT_PAGE }));
  }

  getProject(id: string): Promise<WireProject> {
    return mapped(this.http.get(`/api/v1/projects/${encodeURIComponent(id)}`, { shape: PROJECT }));
  }

  listDocuments(filter: DocumentListFilter): Promise<WireDocumentPage> {
    return mapped(this.http.get('/api/v1/documents', { query: documentListQuery(filter), shape: DOCUMENT_PAGE }));
  }

  getDocument(id: string): Promise<WireDocument> {
    return mapped(this.http.get(`/api/v1/documents/${encodeURIComponent(id)}`, { shape: DOCUMENT }));
  }

  documentText(id: string, page: { limit: number; cursor?: string }): Promise<WireDocumentText> {
    return mapped(this.http.get(`/api/v1/documents/${encodeURIComponent(id)}/text`, { query: page, shape: DOCUMENT_TEXT }));
  }

  async addNote(note: NewNote): Promise<WireDocument> {
    const form = new FormData();
    if (note.project_id) form.append('project_id', note.project_id);
    form.append('file', new Blob([note.text], { type: 'text/plain' }), note.filename);
    const res = await mapped(this.http.json('POST', '/api/v1/upload', { body: form, query: { wait: 'true', wait_timeout: NOTE_WAIT_S }, retry: true, shape: DOCUMENT_PAGE }));
    return res.documents[0]!;
  }
}
