import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { LabelNames } from '../labels/names.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { DocumentFilename, DocumentSchema, oneDocumentToWire } from './wire.js';
import { nothingToChange } from '../nothing-to-change.js';

export const updateDocument = (s: Services) =>
  defineRoute({
    name: 'documents.update',
    method: 'PATCH',
    path: '/documents/:id',
    scope: 'write:documents',
    tag: 'documents',
    summary:
      'Rename a document (`filename`), move it to another project (`project_id`; the caller edits both projects), change its `labels`, or merge `metadata` over its own. A move takes its chunks along in one ' +
      'index commit: a search scoped to either project finds it in exactly one of them at any moment, and its labels go with it (the same names in the new project). A document still being ' +
      'indexed can be renamed and labelled but not moved nor given metadata (409), and a project holds each content and each upload path once (409).',
    params: IdParams,
    body: z.strictObject({
      filename: DocumentFilename.optional(),
      project_id: z.string().min(1).max(100).optional(),
      labels: z
        .union([LabelNames, z.strictObject({ add: LabelNames.optional(), remove: LabelNames.optional() })])
        .optional()
        .describe("its labels' names exactly (made in its project's vocabulary where missing), or {add, remove} to change some (an extra of docsearch: docs/api.md#labels)"),
      metadata: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('keys merged over its metadata: a value replaces the key\'s, null removes the key (JSON merge patch, RFC 7396, at the top level)'),
    }),
    responses: {
      200: { description: 'The document as it is now', schema: DocumentSchema },
      403: { description: 'A viewer of either project', schema: ErrorBody },
      404: { description: 'No such document, or no such project (also one the caller may not read)', schema: ErrorBody },
      409: { description: 'Still being indexed, or the project already holds the same file or path', schema: ErrorBody },
      507: { description: 'A move that would pass the other project\'s quota (`quota_exceeded`): it stays where it was', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      if (body.filename === undefined && body.project_id === undefined && body.labels === undefined && body.metadata === undefined) {
        throw nothingToChange('filename, project_id, labels or metadata');
      }
      let { document: doc } = await s.access.document(principal, params.id, 'edit');
      if (body.project_id !== undefined) await s.access.check(principal, body.project_id, 'edit');
      // Before the other changes: refused while the document is indexed (409), with nothing changed yet.
      if (body.metadata !== undefined) doc = await s.ingest.mergeMetadata(doc, body.metadata);
      if (body.project_id !== undefined) doc = await s.ingest.move(doc, body.project_id);
      if (body.filename !== undefined) doc = await s.ingest.rename(doc, body.filename);
      if (body.labels !== undefined) {
        const labels = body.labels;
        await s.labelService.change([doc], Array.isArray(labels) ? { set: labels } : { ...(labels.add ? { add: labels.add } : {}), ...(labels.remove ? { remove: labels.remove } : {}) });
      }
      return { status: 200, body: await oneDocumentToWire(s, doc) };
    },
  });
