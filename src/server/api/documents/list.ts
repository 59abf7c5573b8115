import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { decodeListCursor, DocumentListQuery, encodeListCursor, listScope, toFilter } from './query.js';
import { DocumentSchema, documentsToWire } from './wire.js';

export const listDocuments = (s: Services) =>
  defineRoute({
    name: 'documents.list',
    method: 'GET',
    path: '/documents',
    scope: 'read:documents',
    tag: 'documents',
    summary:
      'List the documents of every project the caller may read, cursor-paginated, in upload order or sorted by name or size; filtered by project, status, ' +
      'type, upload path, part of the name and upload time. A document replaced by a newer version at its path is not listed.',
    query: DocumentListQuery,
    responses: {
      200: { description: 'A page of documents', schema: z.object({ documents: z.array(DocumentSchema), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query', schema: ErrorBody },
      404: { description: 'No such project (or one the caller may not read)', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      const scope = await s.access.scope(principal, query.project_id ? [query.project_id] : undefined);
      const filter = toFilter(query);
      const list = listScope(principal.userId, query.sort, filter);
      const { documents, next } = await s.documents.list(scope, filter, query.limit, decodeListCursor(query.sort, query.cursor, list), query.sort);
      return { status: 200, body: { documents: await documentsToWire(s, documents), next_cursor: next ? encodeListCursor(query.sort, next, list) : null } };
    },
  });
