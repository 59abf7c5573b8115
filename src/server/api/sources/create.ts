import { z } from 'zod';
import { KIND_NAMES } from '../../../sources/kind.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { projectForSources } from './access.js';
import { withBodyFieldErrors } from './field-errors.js';
import { LabelNames } from '../labels/names.js';
import { Every, SourceOptions, SourceSchema, sourceToWire } from './wire.js';
import { MAX_SOURCE_URL_CHARS } from '../../../core/source-limits.js';

export const createSource = (s: Services) =>
  defineRoute({
    name: 'sources.create',
    method: 'POST',
    path: '/projects/:id/sources',
    scope: 'write:documents',
    tag: 'sources',
    summary:
      'Add a source that keeps the project current: a server folder (file:///srv/docs, under --source-roots), a WebDAV folder, an S3 bucket (s3://bucket/prefix), ' +
      'a Git repository, a web site or an IMAP mailbox (docs/sources.md). The kind comes from the URL when not given. The first pass starts at once.',
    params: IdParams,
    body: z.strictObject({
      kind: z.enum(KIND_NAMES).optional(),
      url: z.string().min(1).max(MAX_SOURCE_URL_CHARS),
      every: Every.optional(),
      options: SourceOptions.optional(),
      labels: LabelNames.optional().describe('label names to put on every document it brings (made in the project\'s vocabulary where missing)'),
    }),
    responses: {
      201: { description: 'Added; its first pass is under way', schema: SourceSchema },
      400: { description: 'Invalid kind, URL, schedule or options; a folder outside --source-roots', schema: ErrorBody },
      404: { description: 'Project not found', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      const project = await projectForSources(s, principal, params.id);
      // Its documents are uploaded by whoever added the source.
      const source = await withBodyFieldErrors(() => s.sources.create({ id: project.id, userId: principal.userId }, body));
      return { status: 201, body: sourceToWire(source, s.sources) };
    },
  });
