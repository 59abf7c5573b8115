import { z } from 'zod';
import type { Services } from '../../services.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Pagination } from '../schemas.js';
import { MAX_PATH_CHARS } from './paths.js';
import { DocumentSchema, DocumentStatus, documentToWire } from './wire.js';

export const listDocuments = (s: Services) =>
  defineRoute({
    name: 'documents.list',
    method: 'GET',
    path: '/documents',
    scope: 'read:documents',
    tag: 'documents',
    summary:
      "List the caller's documents (cursor-paginated, upload order), optionally of one project, in one status and/or uploaded from one path. " +
      'A document replaced by a newer version at its path is not listed.',
    query: Pagination.extend({
      project_id: z.string().min(1).max(100).optional(),
      status: DocumentStatus.optional(),
      path: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('only documents uploaded from this relative path'),
    }),
    responses: {
      200: { description: 'A page of documents', schema: z.object({ documents: z.array(DocumentSchema), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      const { documents, hasMore } = await s.documents.list(
        principal.userId,
        { projectId: query.project_id, status: query.status, ...(query.path !== undefined ? { path: query.path } : {}) },
        query.limit,
        decodeCursor(query.cursor),
      );
      const last = documents.at(-1);
      return {
        status: 200,
        body: { documents: documents.map(documentToWire), next_cursor: hasMore && last ? encodeCursor(last.id) : null },
      };
    },
  });
