/**
 * What the MCP tools need of a library, in the REST API's own wire shapes (docs/api.md), so one tool surface
 * runs over two backends: the daemon's route handlers in-process (`/mcp`) and the REST API over HTTP
 * (`docsearch mcp`, stdio). Each call acts as one authenticated user; a backend enforces that user's scopes.
 * The wire types are checked against the OpenAPI document by test/server/client-wire-types.test.ts.
 */
import { filtersToParams } from '../core/filter-params.js';
import type { FiltersInput } from '../core/filters.js';

export interface WireProject {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  document_count: number;
  chunk_count: number;
  size_bytes: number;
  created_at: string;
  updated_at: string;
  /** The user's role on it (docs/permissions.md). */
  role: 'viewer' | 'editor' | 'owner';
  /** Its owner of record's e-mail; null when that account was deleted. */
  owner: string | null;
}

export interface WireDocument {
  id: string;
  project_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  chunk_count: number;
  pages: number | null;
  warnings: string[];
  error: string | null;
  path: string | null;
  attached_to: string | null;
  /** What the file says about itself: an e-mail's `email` (from, to, cc, date, subject), a PDF's title … */
  metadata: Record<string, unknown>;
  /** Its labels' names. */
  labels: string[];
  created_at: string;
  updated_at: string;
  duplicate?: boolean;
}

export interface WirePassage {
  chunk_id: string;
  score: number;
  text: string;
  snippet: string;
  highlights: [number, number][];
  page_start?: number;
  page_end?: number;
  heading?: string;
  ocr?: true;
}

interface SearchDocumentRef {
  id: string;
  filename: string;
  content_type: string;
  path?: string;
}

/** What every page of POST /api/v1/search says beside its results (the CLI reads it too: cli/api-types.ts). */
export interface WireSearchEnvelope {
  query: string;
  took_ms: number;
  total: { value: number; relation: 'eq' | 'gte' };
  weak: boolean;
  next_cursor: string | null;
  indexing: number;
  warnings?: string[];
  /** Per facet asked, the values of the whole result list and their counts (docs/api.md#facets). */
  facets?: Record<string, WireFacetValue[]>;
}

export interface WireFacetValue {
  value: string | number | boolean | null;
  count: number;
  name?: string;
  color?: string;
}

export interface WireSearchResponse extends WireSearchEnvelope {
  results?: (WirePassage & { document: SearchDocumentRef; project: { id: string; name: string } })[];
  documents?: { document: SearchDocumentRef; project: { id: string; name: string }; score: number; matches: number; passages: WirePassage[] }[];
}

export interface WireSearchRequest {
  query: string;
  limit: number;
  mode: 'hybrid' | 'vector' | 'keyword';
  group: 'none' | 'document';
  project_ids?: string[];
  document_ids?: string[];
  cursor?: string;
  /** The filter language (core/filters.ts, docs/api.md#filters). */
  filters?: FiltersInput;
  facets?: string[];
}

export type WireUnit = 'page' | 'slide' | 'row' | 'chapter';

export interface WireTextChunk {
  id: string;
  index: number;
  text: string;
  heading: string | null;
  page_start: number | null;
  page_end: number | null;
  ocr: boolean;
  placement: { overlap: number; separator: string; page_starts: [number, number][] } | null;
}

export interface WireDocumentText {
  document_id: string;
  status: WireDocument['status'];
  unit: WireUnit | null;
  pages: { page: number | null; chunks: WireTextChunk[] }[];
  next_cursor: string | null;
}

export interface DocumentListFilter {
  project_id?: string;
  status?: WireDocument['status'];
  filename?: string;
  path?: string;
  limit: number;
  cursor?: string;
  /** The filter language (core/filters.ts): the backends send it as the list's query parameters. */
  filters?: FiltersInput;
  /** Facets to count over the whole list (docs/api.md#facets). */
  facets?: string[];
}

/** GET /api/v1/documents: a page, and with `facets` asked the whole list's counts. */
export interface WireDocumentPage {
  documents: WireDocument[];
  next_cursor: string | null;
  facets?: Record<string, WireFacetValue[]>;
}

/** A list's filter as GET /api/v1/documents's query parameters (the filter language's names, facets comma-joined). */
export function documentListQuery(filter: DocumentListFilter): Record<string, string | number> {
  const { filters, facets, ...rest } = filter;
  return { ...rest, ...Object.fromEntries(filtersToParams(filters)), ...(facets?.length ? { facets: facets.join(',') } : {}) };
}

export interface NewNote {
  project_id?: string;
  filename: string;
  text: string;
}

export interface Library {
  search(request: WireSearchRequest): Promise<WireSearchResponse>;
  listProjects(page: { limit: number; cursor?: string }): Promise<{ projects: WireProject[]; next_cursor: string | null }>;
  getProject(id: string): Promise<WireProject>;
  listDocuments(filter: DocumentListFilter): Promise<WireDocumentPage>;
  getDocument(id: string): Promise<WireDocument>;
  /** The document's chunks in order (GET /documents/{id}/text), `limit` at a time. */
  documentText(id: string, page: { limit: number; cursor?: string }): Promise<WireDocumentText>;
  /** Stores a text note as a document (an upload of one text file) and waits, bounded, until it is searchable. */
  addNote(note: NewNote): Promise<WireDocument>;
}

/**
 * A refusal a backend reports in the API's terms (status and error code, e.g. 403 insufficient_scope, 404
 * not_found): the tool turns it into a tool error the model can read, never a protocol failure.
 */
export class LibraryError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'LibraryError';
  }
}
