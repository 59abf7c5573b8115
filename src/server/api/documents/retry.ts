import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { DocumentSchema, oneDocumentToWire } from './wire.js';

export const retryDocument = (s: Services) =>
  defineRoute({
    name: 'documents.retry',
    method: 'POST',
    path: '/documents/:id/retry',
    scope: 'write:documents',
    tag: 'documents',
    summary: 'Process a failed document again (after fixing what failed it: a model server that was down, a parser limit): it is queued as if new.',
    params: IdParams,
    responses: {
      202: { description: 'Queued again', schema: DocumentSchema },
      403: { description: 'A viewer of the project', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'The document is not failed', schema: ErrorBody },
    },
    async handler({ params, principal }) {
      const { document } = await s.access.document(principal, params.id, 'edit');
      return { status: 202, body: await oneDocumentToWire(s, await s.ingest.retry(document)) };
    },
  });
