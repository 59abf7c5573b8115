import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { projectForSources } from './access.js';
import { SourceParams, SourceSchema, sourceToWire } from './wire.js';

export const syncSource = (s: Services) =>
  defineRoute({
    name: 'sources.sync',
    method: 'POST',
    path: '/projects/:id/sources/:sid/sync',
    scope: 'write:documents',
    tag: 'sources',
    summary:
      'Run a pass now (after the running one, if any). A paused source answers 409 unless `confirm` is true, which resumes it and lets its next pass ' +
      'remove what it finds gone, however much.',
    params: SourceParams,
    body: z.strictObject({ confirm: z.boolean().optional() }),
    responses: {
      202: { description: 'A pass is due now', schema: SourceSchema },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'The source is paused (the message says why)', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      const project = await projectForSources(s, principal, params.id);
      return { status: 202, body: sourceToWire(await s.sources.sync(project.id, params.sid, body.confirm ?? false), s.sources) };
    },
  });
