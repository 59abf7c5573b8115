/**
 * Wire shapes of /api/v1 as the CLI reads them (ARCHITECTURE.md §3). cli/ cannot import server/'s schemas, so they
 * are written here and checked against the OpenAPI document by test/server/client-wire-types.test.ts.
 */
import type { WireFacetValue, WireSearchEnvelope } from '../mcp/library.js';

import type { CitationFields } from '../core/citation-label.js';
import { shape } from './wire-shape.js';

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
  /** The caller's role on it: viewer, editor or owner. */
  role?: 'viewer' | 'editor' | 'owner';
  /** Its owner of record's e-mail (null: an account since deleted). */
  owner?: string | null;
  /** The language and OCR languages its uploads get (null: detected / the server's; absent from older servers). */
  language?: string | null;
  ocr_languages?: string | null;
}

/** GET /api/v1/projects/{id}/members. */
export interface ProjectMember {
  id: string;
  kind: 'user' | 'group';
  email?: string;
  group?: string;
  role: 'viewer' | 'editor' | 'owner';
}

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  scopes: string[];
  /** The projects the key is limited to; null: every project its user reads. */
  project_ids?: string[] | null;
  created_at: string;
  last_used_at: string | null;
  /** From when the key no longer authenticates; null: never. */
  expires_at: string | null;
  /** Whether `expires_at` has passed, by the server's clock. */
  expired: boolean;
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
  /** The relative path it was uploaded from (`upload --sync`), or null. */
  path?: string | null;
  /** The id of the e-mail it was attached to (deleted with it), or null. */
  attached_to?: string | null;
  /** Who uploaded it (their e-mail; null for an account since deleted). */
  uploaded_by?: string | null;
  /** The source that keeps it current and its path there, or null (an upload). */
  source_id?: string | null;
  source_path?: string | null;
  /** The language most of its chunks are in (ISO 639-1), once ready (absent from servers before languages). */
  language?: string | null;
  /** The language its upload, source or project set it to, or null (absent from servers before languages). */
  language_setting?: string | null;
  ocr_languages?: string | null;
  /** Its labels' names (absent from servers before labels). */
  labels?: string[];
  created_at?: string;
  updated_at?: string;
}

export type SourceStatus = 'active' | 'syncing' | 'paused' | 'error';

export interface SourcePassResult {
  listed: number;
  added: number;
  changed: number;
  deleted: number;
  unchanged: number;
  failed: number;
  deferred: number;
  ms: number;
}

export interface Source {
  id: string;
  project_id: string;
  kind: string;
  url: string;
  every: string;
  status: SourceStatus;
  paused_reason: string | null;
  /** Deletions the guard holds for confirmation, and which (the first 500). */
  held_deletions: { count: number; items: { path: string; document_id: string; filename: string | null }[] } | null;
  last_sync: string | null;
  next_sync: string | null;
  last_result: SourcePassResult | null;
  error?: string;
  options: Record<string, unknown>;
  secrets: string[];
  /** Secret options to enter again: the sealed ones cannot be read (another secrets key). */
  secrets_to_reenter: string[];
  item_errors?: { count: number; items: { path: string; error: string; at: string }[] };
  /** The labels (names) it puts on every document it brings (absent from servers before labels). */
  labels?: string[];
  created_at: string;
  updated_at: string;
}

/** GET /api/v1/trash: a document in the trash. */
export interface TrashEntry extends Omit<DocumentRecord, 'duplicate'> {
  trashed_at: string;
  /** Who deleted it (their e-mail), or null. */
  trashed_by: string | null;
  /** When it is removed for good unless restored. */
  purge_at: string;
}

export interface SearchPassage {
  chunk_id: string;
  score: number;
  /** What `score` came from: the rank in each first-stage list and the reranker's score. */
  scores?: { vector?: { rank: number; similarity: number }; keyword?: { rank: number; bm25: number }; rerank?: number };
  text: string;
  /** The sentence(s) of `text` that best answer the query (absent from older servers). */
  snippet?: string;
  highlights: Array<[number, number]>;
  page_start?: number | null;
  page_end?: number | null;
  heading?: string | null;
  /** True when the text was recognised by OCR from a scanned page. */
  ocr?: boolean;
  /** What the passage cites, for types with such a unit (slides, sheet rows, chapters, pages). */
  citation?: CitationFields;
}

export interface SearchDocument {
  id: string;
  filename: string;
  content_type: string;
  /** The relative path it was synced from (`upload --sync`). */
  path?: string;
}

export interface SearchResult extends SearchPassage {
  document: SearchDocument;
  project: { id: string; name: string };
}

export interface DocumentResult {
  document: SearchDocument;
  project: { id: string; name: string };
  score: number;
  matches: number;
  passages: SearchPassage[];
}

/** POST /api/v1/search: `results` (passages), or `documents` with group "document"; the envelope as MCP reads it. */
export type SearchResponse = WireSearchEnvelope & ({ results: SearchResult[] } | { documents: DocumentResult[] });

/** GET /api/v1/me. */
export interface Me {
  id: string;
  email: string;
  kind: 'api_key' | 'oauth' | 'session';
  scopes: string[];
  /** Whether the account is an admin of this docsearch (absent from older servers). */
  admin?: boolean;
  /** The projects the credential is limited to (a per-project key); null: every project the account may read. */
  project_ids?: string[] | null;
  /** When the presented credential stops working; null: never. */
  expires_at: string | null;
}

/** GET /api/v1/admin/users: an account as an admin sees it. */
export interface AdminUser {
  id: string;
  email: string;
  admin: boolean;
  disabled: boolean;
  disabled_at: string | null;
  created_at: string;
  last_sign_in_at: string | null;
  kind: 'local' | 'provider';
  providers: string[];
  two_factor: { totp: boolean; passkeys: number };
  usage: { documents: number; bytes: number; chunks: number };
  /** The most its live uploads may hold: its own quota (`own`) or --quota-default; null: none. */
  quota: { limit_bytes: number | null; own: boolean };
}

/** GET /api/v1/admin/invitations. */
export interface Invitation {
  id: string;
  email: string;
  admin: boolean;
  group: string | null;
  created_at: string;
  expires_at: string;
  created_by: { id: string; email: string | null } | null;
}

/** A link an admin route made: shown once, unless it went out by mail. */
export interface IssuedLink {
  link: string | null;
  mailed: boolean;
  expires_at: string;
}

/** GET /api/v1/admin/groups. */
export interface AdminGroup {
  id: string;
  name: string;
  description: string;
  source: string;
  member_count: number;
  created_at: string;
}

/** GET /api/v1/admin/mail: one row of the outbox. */
export interface OutboxMail {
  id: string;
  kind: string;
  to: string;
  subject: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/**
 * The fields `--json f1,f2` may select on each list command's items (gh's `--json fields`). They are the
 * wire fields above; docs/cli.md lists them from here.
 */
export const JSON_FIELDS = {
  projects: ['id', 'name', 'description', 'metadata', 'is_default', 'document_count', 'chunk_count', 'size_bytes', 'created_at', 'updated_at', 'role', 'owner', 'language', 'ocr_languages'],
  documents: ['id', 'project_id', 'filename', 'path', 'content_type', 'size_bytes', 'sha256', 'status', 'progress', 'chunk_count', 'pages', 'warnings', 'error', 'metadata', 'attached_to', 'uploaded_by', 'source_id', 'source_path', 'language', 'language_setting', 'ocr_languages', 'labels', 'created_at', 'updated_at'],
  sources: ['id', 'project_id', 'kind', 'url', 'every', 'status', 'paused_reason', 'held_deletions', 'last_sync', 'next_sync', 'last_result', 'error', 'options', 'secrets', 'secrets_to_reenter', 'item_errors', 'labels', 'created_at', 'updated_at'],
  keys: ['id', 'name', 'prefix', 'last4', 'scopes', 'project_ids', 'created_at', 'last_used_at', 'expires_at', 'expired'],
  members: ['id', 'kind', 'email', 'group', 'role'],
  results: ['chunk_id', 'score', 'scores', 'text', 'snippet', 'highlights', 'page_start', 'page_end', 'heading', 'ocr', 'citation', 'document', 'project'],
  search_documents: ['document', 'project', 'score', 'matches', 'passages'],
  trash: ['id', 'project_id', 'filename', 'path', 'content_type', 'size_bytes', 'sha256', 'status', 'progress', 'chunk_count', 'pages', 'warnings', 'error', 'metadata', 'attached_to', 'uploaded_by', 'source_id', 'source_path', 'language', 'language_setting', 'ocr_languages', 'labels', 'trashed_at', 'trashed_by', 'purge_at', 'created_at', 'updated_at'],
  saved_searches: ['id', 'name', 'search', 'project_id', 'created_by', 'mine', 'created_at', 'updated_at'],
} as const satisfies Record<string, readonly string[]>;

export type JsonList = keyof typeof JSON_FIELDS;

/**
 * The command whose `--json` output holds each list, and the list's property in that output (its fields complete
 * after `--json`; docs/cli.md names them).
 */
export const JSON_LIST_COMMANDS: Record<JsonList, { command: string; key: string }> = {
  projects: { command: 'projects list', key: 'projects' },
  documents: { command: 'documents list', key: 'documents' },
  // Gathered from every project's list: printed as one array, as gh prints a list.
  sources: { command: 'sources list', key: '[]' },
  keys: { command: 'keys list', key: 'keys' },
  members: { command: 'projects members', key: 'members' },
  results: { command: 'search', key: 'results' },
  search_documents: { command: 'search --documents', key: 'documents' },
  trash: { command: 'trash list', key: 'documents' },
  saved_searches: { command: 'saved-searches list', key: 'saved_searches' },
};

/** Every field name any list command knows: decides whether the word after `--json` is a field list. */
export const ALL_JSON_FIELDS: ReadonlySet<string> = new Set(Object.values(JSON_FIELDS).flat());

/*
 * What the CLI relies on in each answer (wire-shape.ts), checked before it reads one: the fields it cannot do
 * without, so that another service's JSON is named as such. Not the whole of each type (newer servers add fields,
 * older ones lack optional ones).
 */
export const PROJECT = shape<Project>({ id: 'string', name: 'string' });
export const PROJECT_PAGE = shape<{ projects: Project[]; next_cursor: string | null }>({ projects: [PROJECT.fields] });
export const MEMBER = shape<ProjectMember>({ id: 'string', kind: 'string', role: 'string' });
export const MEMBER_LIST = shape<{ members: ProjectMember[] }>({ members: [MEMBER.fields] });
export const DOCUMENT = shape<DocumentRecord>({ id: 'string', filename: 'string', project_id: 'string', status: 'string' });
export const DOCUMENT_PAGE = shape<{ documents: DocumentRecord[]; next_cursor?: string | null; facets?: Record<string, WireFacetValue[]> }>({ documents: [DOCUMENT.fields] });
export const TRASH_PAGE = shape<{ documents: TrashEntry[]; next_cursor: string | null; retention_days?: number }>({ documents: [{ ...DOCUMENT.fields, trashed_at: 'string' }] });
export const SOURCE = shape<Source>({ id: 'string', project_id: 'string', kind: 'string', url: 'string', status: 'string' });
export const SOURCE_LIST = shape<{ sources: Source[] }>({ sources: [SOURCE.fields] });
export const KEY = shape<ApiKey>({ id: 'string', prefix: 'string', last4: 'string', scopes: ['string'] });
export const KEY_LIST = shape<{ keys: ApiKey[] }>({ keys: [KEY.fields] });
export const CREATED_KEY = shape<ApiKey & { key: string }>({ ...KEY.fields, key: 'string' });
export const ME = shape<Me>({ id: 'string', email: 'string', scopes: ['string'] });
export const LABEL_LIST = shape<{ labels: { name: string; document_count: number }[] }>({ labels: [{ name: 'string', document_count: 'number' }] });
const PASSAGE = { text: 'string', highlights: [['number']] } as const;
const HIT_OF = { document: { id: 'string', filename: 'string' }, project: { id: 'string', name: 'string' } } as const;
/** A search's answer: passages (`results`), or with group "document" the documents (`documents`). */
export const SEARCH_PASSAGES = shape<WireSearchEnvelope & { results: SearchResult[] }>({ results: [{ ...PASSAGE, ...HIT_OF }], total: { value: 'number' } });
export const SEARCH_DOCUMENTS = shape<WireSearchEnvelope & { documents: DocumentResult[] }>({ documents: [{ ...HIT_OF, passages: [PASSAGE] }], total: { value: 'number' } });
export const ADMIN_USER = shape<AdminUser>({ id: 'string', email: 'string', two_factor: { passkeys: 'number' }, usage: { documents: 'number', bytes: 'number' }, quota: 'object' });
export const ADMIN_USER_LIST = shape<{ users: AdminUser[] }>({ users: [ADMIN_USER.fields] });
export const ISSUED_LINK = shape<IssuedLink>({ mailed: 'boolean', expires_at: 'string' });
export const INVITATION = shape<Invitation>({ id: 'string', email: 'string' });
export const INVITATION_LIST = shape<{ invitations: Invitation[] }>({ invitations: [INVITATION.fields] });
export const ADMIN_GROUP = shape<AdminGroup>({ id: 'string', name: 'string', member_count: 'number' });
export const ADMIN_GROUP_LIST = shape<{ groups: AdminGroup[] }>({ groups: [ADMIN_GROUP.fields] });
export const OUTBOX_MAIL = shape<OutboxMail>({ id: 'string', to: 'string', status: 'string' });
