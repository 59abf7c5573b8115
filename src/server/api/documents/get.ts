import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { DocumentSchema, documentToWire } from './wire.js';

export const getDocument = (s: Services) =>
  defineRoute({
    name: 'documents.get',
    method: 'GET',
    path: '/documents/:id',
    scope: 'read:documents',
    tag: 'documents',
    summary: "One document: status, progress, chunk count, pages, warnings, error. Another user's document is a 404.",
    params: IdParams,
    responses: { 200: { description: 'The document', schema: DocumentSchema }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const doc = await s.documents.get(principal.userId, params.id);
      if (!doc) throw notFound('document');
      return { status: 200, body: documentToWire(doc) };
    },
  });
