import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

export const deleteDocument = (s: Services) =>
  defineRoute({
    name: 'documents.delete',
    method: 'DELETE',
    path: '/documents/:id',
    scope: 'write:documents',
    tag: 'documents',
    summary: 'Delete a document. Its chunks leave the index before the answer; the original file goes when no document references it.',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 403: { description: 'A viewer of the project', schema: ErrorBody }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const { document } = await s.access.document(principal, params.id, 'edit');
      if (!(await s.ingest.delete(document))) throw notFound('document');
      return { status: 204 };
    },
  });
