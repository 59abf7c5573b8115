/** Wire shapes of /api/v1 as the CLI reads them (ARCHITECTURE.md §3). cli/ cannot import server/'s schemas. */

export interface Project {
  id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  is_default?: boolean;
  document_count: number;
  chunk_count: number;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed';

export interface DocumentRecord {
  id: string;
  filename: string;
  size_bytes: number;
  content_type: string;
  sha256: string;
  project_id: string;
  status: DocumentStatus;
  duplicate?: boolean;
  progress?: number;
  chunk_count?: number;
  pages?: number | null;
  warnings?: string[];
  error?: string | null;
  metadata?: Record<string, unknown>;
  created_at?: string;
  updated_at?: string;
}

export interface SearchResult {
  chunk_id: string;
  score: number;
  text: string;
  highlights: Array<[number, number]>;
  page_start?: number | null;
  page_end?: number | null;
  heading?: string | null;
  /** True when the text was recognised by OCR from a scanned page. */
  ocr?: boolean;
  document: { id: string; filename: string; content_type: string };
  project: { id: string; name: string };
}

export interface SearchResponse {
  query: string;
  took_ms: number;
  results: SearchResult[];
}
