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
    summary:
      'Delete a document: it leaves search and lists before the answer and goes to the trash (`GET /api/v1/trash`) with its chunks and original, restorable for `--trash-days` (30); then, or when purged, it is removed for good (its attachments with it).',
    params: IdParams,
    responses: { 204: { description: 'In the trash' }, 403: { description: 'A viewer of the project', schema: ErrorBody }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const { document } = await s.access.document(principal, params.id, 'edit');
      if (!(await s.ingest.delete(document, principal.userId))) throw notFound('document');
      return { status: 204 };
    },
  });
