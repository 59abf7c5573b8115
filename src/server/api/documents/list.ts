import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { decodeListCursor, DocumentListQuery, encodeListCursor, toFilter } from './query.js';
import { DocumentSchema, documentToWire } from './wire.js';

export const listDocuments = (s: Services) =>
  defineRoute({
    name: 'documents.list',
    method: 'GET',
    path: '/documents',
    scope: 'read:documents',
    tag: 'documents',
    summary:
      "List the caller's documents, cursor-paginated, in upload order or sorted by name or size; filtered by project, status, " +
      'type, upload path, part of the name and upload time. A document replaced by a newer version at its path is not listed.',
    query: DocumentListQuery,
    responses: {
      200: { description: 'A page of documents', schema: z.object({ documents: z.array(DocumentSchema), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query', schema: ErrorBody },
      404: { description: 'No such project of the caller\'s (`project_id`)', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      // A project that is not the caller's would list nothing, as if it were empty: it is a 404, as on every route.
      if (query.project_id !== undefined && !(await s.projects.get(principal.userId, query.project_id))) throw notFound(`project "${query.project_id}"`);
      const { documents, next } = await s.documents.list(principal.userId, toFilter(query), query.limit, decodeListCursor(query.sort, query.cursor), query.sort);
      return { status: 200, body: { documents: documents.map(documentToWire), next_cursor: next ? encodeListCursor(query.sort, next) : null } };
    },
  });
