import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Principal } from '../../auth/principal.js';
import { AppError, notFound } from '../../core/errors.js';
import { refusalText } from '../../core/refusal-text.js';
import { fileType } from '../../ingest/file-type.js';
import { SNIFF_BYTES } from '../../ingest/sniff.js';
import type { DocumentListFilter, Library, NewNote, WireDocument, WireDocumentPage, WireDocumentText, WireProject, WireSearchRequest, WireSearchResponse } from '../../mcp/library.js';
import { documentListQuery, LibraryError } from '../../mcp/library.js';
import { legacyOffice } from '../api/documents/multipart.js';
import { oneDocumentToWire } from '../api/documents/wire.js';
import type { ApiRoute } from '../api/route.js';
import { parseInput } from '../api/validate.js';
import { toAppError } from '../middleware/error-handler.js';
import type { Services } from '../services.js';

/** How long add_document waits for a note to become searchable before answering with its status. */
const NOTE_WAIT_MS = 60_000;

/**
 * The library as `/mcp` sees it: the /api/v1 route handlers themselves, called in-process for one principal,
 * with each route's own scope check and input validation — so a tool answers exactly what the REST API would,
 * without a second HTTP hop.
 */
export class InProcessLibrary implements Library {
  private readonly routes: Map<string, ApiRoute>;

  constructor(
    private readonly s: Services,
    routes: readonly ApiRoute[],
    private readonly principal: Principal,
  ) {
    this.routes = new Map(routes.map((r) => [r.name, r]));
  }

  private async call<T>(name: string, input: { body?: unknown; query?: unknown; params?: unknown }): Promise<T> {
    const route = this.routes.get(name);
    if (!route) throw new Error(`no /api/v1 route named ${name}`);
    try {
      this.requireScope(route.scope);
      const result = await route.handler({
        body: route.body ? parseInput(route.body, input.body ?? {}, 'body') : undefined,
        query: route.query ? parseInput(route.query, input.query ?? {}, 'query') : undefined,
        params: route.params ? parseInput(route.params, input.params ?? {}, 'params') : undefined,
        principal: this.principal,
        // The routes called here (search, lists, a document, its text) read no request context; uploads go through addNote.
        ctx: undefined as never,
      });
      return result.body as T;
    } catch (err) {
      throw asLibraryError(err);
    }
  }

  private requireScope(scope: ApiRoute['scope']): void {
    if (scope && scope !== 'authenticated' && !this.principal.scopes.includes(scope)) {
      throw new AppError('insufficient_scope', `this credential lacks the ${scope} scope`);
    }
  }

  search(request: WireSearchRequest): Promise<WireSearchResponse> {
    return this.call('search', { body: request });
  }

  listProjects(page: { limit: number; cursor?: string }): Promise<{ projects: WireProject[]; next_cursor: string | null }> {
    return this.call('projects.list', { query: page });
  }

  getProject(id: string): Promise<WireProject> {
    return this.call('projects.get', { params: { id } });
  }

  listDocuments(filter: DocumentListFilter): Promise<WireDocumentPage> {
    return this.call('documents.list', { query: documentListQuery(filter) });
  }

  getDocument(id: string): Promise<WireDocument> {
    return this.call('documents.get', { params: { id } });
  }

  documentText(id: string, page: { limit: number; cursor?: string }): Promise<WireDocumentText> {
    return this.call('documents.text', { params: { id }, query: page });
  }

  /** An upload of one text file, as POST /api/v1/upload?wait=true would store it (the same accept and wait). */
  async addNote(note: NewNote): Promise<WireDocument> {
    const { s, principal } = this;
    try {
      this.requireScope('write:documents');
      const projectId = await s.access.uploadTarget(principal, note.project_id);
      const bytes = Buffer.from(note.text, 'utf8');
      if (bytes.length > s.config.maxUploadMb * 1024 * 1024) throw new AppError('payload_too_large', `the note is larger than the server's upload limit (${s.config.maxUploadMb} MiB)`);
      const tempPath = await s.files.tempFileOf(bytes);
      try {
        // Typed as the upload route types a file (name and bytes): a .md note is Markdown there, so it is here.
        const decided = await fileType({ tempPath, head: bytes.subarray(0, SNIFF_BYTES), filename: note.filename, sizeBytes: bytes.length }, legacyOffice(s));
        if ('refused' in decided) throw new AppError('unsupported_media_type', decided.refused);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const [accepted] = await s.ingest.accept(principal.userId, projectId, [{ tempPath, filename: note.filename, contentType: decided.type, sizeBytes: bytes.length, sha256 }], {});
        const { documents } = await s.ingest.waitSettled([accepted!.document.id], NOTE_WAIT_MS);
        return { ...(await oneDocumentToWire(s, documents[0] ?? accepted!.document)), ...(accepted!.duplicate ? { duplicate: true } : {}) };
      } finally {
        await rm(tempPath, { force: true });
      }
    } catch (err) {
      throw asLibraryError(err);
    }
  }
}

/** An API refusal becomes a LibraryError with its status and message; an internal failure stays an error to log. */
function asLibraryError(err: unknown): unknown {
  const e = toAppError(err);
  return e.expose ? new LibraryError(e.status, e.code, refusalText(e.message)) : err;
}
