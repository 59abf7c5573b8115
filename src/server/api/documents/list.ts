import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { FacetValue } from '../search.js';
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
      'type, upload path, part of the name and upload time. A document replaced by a newer version at its path is not listed. ' +
      '`facets` count the whole list by field (an extra of docsearch: docs/api.md#facets).',
    query: DocumentListQuery,
    responses: {
      200: {
        description: 'A page of documents',
        schema: z.object({
          documents: z.array(DocumentSchema),
          next_cursor: z.string().nullable(),
          facets: z
            .record(z.string(), z.array(FacetValue))
            .optional()
            .describe('with `facets` asked: per facet, the values of the whole list (every page, after the filters), most frequent first (at most 100); a document counts once under each value it has (under each of its labels)'),
        }),
      },
      400: { description: 'Bad query (the message names the parameter, a filter\'s unknown field, operator or type, or an unknown facet)', schema: ErrorBody },
      404: { description: 'No such project (or one the caller may not read)', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      const scope = await s.access.scope(principal, query.project_id ? [query.project_id] : undefined);
      const filter = toFilter(query);
      const list = listScope(principal.userId, query.sort, filter);
      // The counts read the same list as the page (the same scope and filter), all of it.
      const [{ documents, next }, facets] = await Promise.all([
        s.documents.list(scope, filter, query.limit, decodeListCursor(query.sort, query.cursor, list), query.sort),
        query.facets?.length ? s.documents.listIds(scope, filter).then((ids) => s.facets.count(scope, ids.map((documentId) => ({ documentId })), [...new Set(query.facets)])) : undefined,
      ]);
      return {
        status: 200,
        body: { documents: await documentsToWire(s, documents), next_cursor: next ? encodeListCursor(query.sort, next, list) : null, ...(facets ? { facets } : {}) },
      };
    },
  });
