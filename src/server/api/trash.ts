import { z } from 'zod';
import { toIso } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import type { DocumentRecord, TrashPosition } from '../../store/sql/documents.js';
import type { Services } from '../services.js';
import { DocumentSchema, documentToWire, oneDocumentToWire } from './documents/wire.js';
import { type CursorScope, cursorRefused, isListId, scopeDigest } from './pagination.js';
import { defineRoute } from './route.js';
import { ErrorBody, IdParams, Timestamp } from './schemas.js';

/**
 * The trash (docs/api.md#trash): deleted documents, kept with their chunks and original for `--trash-days`, for
 * the editors and owners of their projects to list, restore (the same id, searchable again at once) or purge.
 */

export const TrashEntrySchema = DocumentSchema.extend({
  trashed_at: Timestamp.describe('when it was deleted'),
  trashed_by: z.string().nullable().describe('the e-mail of who deleted it (null when unknown, or that account was deleted)'),
  purge_at: Timestamp.describe('when it is removed for good unless restored (`--trash-days` after it was deleted)'),
}).meta({ id: 'TrashEntry' });

const TrashQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
  project_id: z.string().min(1).max(100).optional().describe('only this project\'s trash'),
});

/** What a trash cursor belongs to: whose trash, and of which project (or all they edit). */
const trashScope = (userId: string, projectId: string | undefined) => ['trash', userId, projectId ?? null];

const encodeTrashCursor = (at: TrashPosition, scope: CursorScope) => Buffer.from(JSON.stringify([at.trashedAt, at.id, scopeDigest(scope)]), 'utf8').toString('base64url');

function decodeTrashCursor(cursor: string | undefined, scope: CursorScope): TrashPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [trashedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const at = { trashedAt: trashedAt as number, id: id as string };
    // Encoded again, exactly: the same place in the same person's trash of the same project.
    if (Number.isSafeInteger(trashedAt) && isListId(id, 'doc') && encodeTrashCursor(at, scope) === cursor) return at;
  } catch {
    // answered below
  }
  throw cursorRefused();
}

/** Trash entries on the wire: each document with who uploaded and who deleted it (one lookup for all). */
export async function trashToWire(s: Pick<Services, 'users' | 'ingest' | 'labels'>, docs: DocumentRecord[]) {
  const [emails, labels] = await Promise.all([s.users.emails([...docs.map((d) => d.userId), ...docs.flatMap((d) => (d.trashedBy ? [d.trashedBy] : []))]), s.labels.ofDocuments(docs.map((d) => d.id))]);
  return docs.map((d) => ({
    ...documentToWire(d, emails.get(d.userId) ?? null, (labels.get(d.id) ?? []).map((l) => l.name)),
    trashed_at: toIso(d.trashedAt!),
    trashed_by: d.trashedBy ? (emails.get(d.trashedBy) ?? null) : null,
    purge_at: toIso(s.ingest.purgeAt(d)),
  }));
}

export const listTrash = (s: Services) =>
  defineRoute({
    name: 'trash.list',
    method: 'GET',
    path: '/trash',
    scope: 'read:documents',
    tag: 'trash',
    summary:
      'The trash of every project the caller edits (or of `project_id`), newest first, cursor-paginated: deleted documents with when, by whom, and when each is purged. ' +
      "A message's attachments are not listed apart: they come back with it. Viewers of a project see none of its trash.",
    query: TrashQuery,
    responses: {
      200: {
        description: 'A page of the trash',
        schema: z.object({
          documents: z.array(TrashEntrySchema),
          next_cursor: z.string().nullable(),
          retention_days: z.number().int().describe('how many days a deleted document stays here (`--trash-days`); 0: deleting removes a document for good at once (an extra of docsearch)'),
        }),
      },
      400: { description: 'Bad query', schema: ErrorBody },
      404: { description: 'No such project (or one the caller may not read)', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      const scope = await s.access.trashScope(principal, query.project_id);
      const list = trashScope(principal.userId, query.project_id);
      const { documents, next } = await s.documents.listTrash(scope, query.limit, decodeTrashCursor(query.cursor, list));
      return { status: 200, body: { documents: await trashToWire(s, documents), next_cursor: next ? encodeTrashCursor(next, list) : null, retention_days: s.config.trashDays } };
    },
  });

export const restoreFromTrash = (s: Services) =>
  defineRoute({
    name: 'trash.restore',
    method: 'POST',
    path: '/trash/:id/restore',
    scope: 'write:documents',
    tag: 'trash',
    summary: 'Take a document out of the trash, with the attachments deleted with it: the same id, in its project, searchable again at once.',
    params: IdParams,
    responses: {
      200: { description: 'Restored', schema: DocumentSchema },
      404: { description: 'Not in the trash (or in the trash of a project the caller does not edit)', schema: ErrorBody },
      409: { description: 'Another document holds its path now, or the path of an attachment that would come back with it', schema: ErrorBody },
      507: { description: 'What it brings back would pass its uploader\'s or its project\'s quota (`quota_exceeded`): it stays in the trash', schema: ErrorBody },
    },
    async handler({ params, principal }) {
      const doc = await s.access.trashed(principal, params.id, 'edit');
      const restored = await s.ingest.restore(doc);
      return { status: 200, body: await oneDocumentToWire(s, restored) };
    },
  });

export const purgeFromTrash = (s: Services) =>
  defineRoute({
    name: 'trash.purge',
    method: 'DELETE',
    path: '/trash/:id',
    scope: 'write:documents',
    tag: 'trash',
    summary: 'Remove a document in the trash for good now: its chunks, its record, and its original when no other document has the same bytes.',
    params: IdParams,
    responses: { 204: { description: 'Purged' }, 404: { description: 'Not in the trash (or in the trash of a project the caller does not edit)', schema: ErrorBody } },
    async handler({ params, principal }) {
      const doc = await s.access.trashed(principal, params.id, 'edit');
      if (!(await s.ingest.purge(doc))) throw notFound('document');
      return { status: 204 };
    },
  });
