import { z } from 'zod';
import { type Library, LibraryError, type WireDocument } from '../library.js';
import { orNull, stringOrNull } from './json-schema.js';

/** A document as the tools show it: what GET /api/v1/documents/{id} says, with its project's name. */
export const DocumentSummary = z.object({
  id: z.string(),
  filename: z.string(),
  path: stringOrNull().describe('where it was uploaded or synced from'),
  project_id: z.string(),
  project_name: z.string(),
  content_type: z.string(),
  status: z.enum(['queued', 'processing', 'ready', 'failed']).describe('ready: searchable, with text'),
  pages: orNull(z.number().int().min(0)).describe('PDF or image pages, slides'),
  size_bytes: z.number().int(),
  chunk_count: z.number().int(),
  warnings: z.array(z.string()),
  error: stringOrNull().describe('why processing failed'),
  attached_to: stringOrNull().describe('the id of the e-mail it was attached to'),
  email: z
    .object({ from: stringOrNull(), to: z.array(z.string()), cc: z.array(z.string()), date: stringOrNull(), subject: stringOrNull() })
    .optional()
    .describe("an e-mail's headers"),
  created_at: z.string(),
});
export type DocumentSummary = z.infer<typeof DocumentSummary>;

/** The names of the projects `ids`, each asked once (GET /projects/{id}). */
export async function projectNames(library: Library, ids: Iterable<string>): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const id of new Set(ids)) names.set(id, (await library.getProject(id)).name);
  return names;
}

type Email = NonNullable<DocumentSummary['email']>;

/** The e-mail headers the parser records (ingest/parsers/email.ts), checked, as metadata is also the uploader's to set. */
function isEmail(value: unknown): value is Email {
  const e = value as Email | undefined;
  const text = (v: unknown) => v === null || (typeof v === 'string' && v !== '');
  const list = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  return typeof e === 'object' && e !== null && text(e.from) && list(e.to) && list(e.cc) && text(e.date) && text(e.subject);
}

/** `projectName` null: the credential may not read projects (add_document by a key with write:documents only). */
export function summary<N extends string | null>(d: WireDocument, projectName: N): Omit<DocumentSummary, 'project_name'> & { project_name: N } {
  return {
    id: d.id,
    filename: d.filename,
    path: d.path || null,
    project_id: d.project_id,
    project_name: projectName,
    content_type: d.content_type,
    status: d.status,
    pages: d.pages,
    size_bytes: d.size_bytes,
    chunk_count: d.chunk_count,
    warnings: d.warnings,
    error: d.error || null,
    attached_to: d.attached_to,
    ...(isEmail(d.metadata?.email) ? { email: d.metadata.email } : {}),
    created_at: d.created_at,
  };
}

/** Documents as the tools show them, their projects' names asked once each. */
export async function summaries(library: Library, documents: readonly WireDocument[]): Promise<DocumentSummary[]> {
  const names = await projectNames(library, documents.map((d) => d.project_id));
  return documents.map((d) => summary(d, names.get(d.project_id)!));
}

/**
 * The caller's project `id`, or a tool error naming it: an id that is not a project of theirs would otherwise read
 * as a project without matches. Asked of GET /projects/{id}, so whatever the API lets the caller see, this follows.
 */
export async function requireProject(library: Library, id: string) {
  try {
    return await library.getProject(id);
  } catch (err) {
    if (err instanceof LibraryError && err.status === 404) throw new LibraryError(404, 'not_found', `no project "${id}" that this user may read: list_projects gives their ids`);
    throw err;
  }
}

/** The caller's document `id`, or a tool error naming it. */
export async function requireDocument(library: Library, id: string): Promise<WireDocument> {
  try {
    return await library.getDocument(id);
  } catch (err) {
    if (err instanceof LibraryError && err.status === 404) throw new LibraryError(404, 'not_found', `no document "${id}" that this user may read: search or list_documents gives their ids`);
    throw err;
  }
}
