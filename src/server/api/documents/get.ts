import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { DocumentSchema, oneDocumentToWire } from './wire.js';

export const getDocument = (s: Services) =>
  defineRoute({
    name: 'documents.get',
    method: 'GET',
    path: '/documents/:id',
    scope: 'read:documents',
    tag: 'documents',
    summary: 'One document: status, progress, chunk count, pages, warnings, error, uploader. A document the caller may not read is a 404.',
    params: IdParams,
    responses: { 200: { description: 'The document', schema: DocumentSchema }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const { document } = await s.access.document(principal, params.id, 'read');
      return { status: 200, body: await oneDocumentToWire(s, document) };
    },
  });
