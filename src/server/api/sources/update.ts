import { z } from 'zod';
import { invalidRequest } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { projectForSources } from './access.js';
import { Every, SourceOptions, SourceParams, SourceSchema, sourceToWire } from './wire.js';

export const updateSource = (s: Services) =>
  defineRoute({
    name: 'sources.update',
    method: 'PATCH',
    path: '/projects/:id/sources/:sid',
    scope: 'write:documents',
    tag: 'sources',
    summary:
      'Change the schedule or options (they replace the old ones; a secret option not given keeps its value), pause (`status: "paused"`) ' +
      'or resume (`status: "active"`): resuming a source the deletion guard paused confirms the deletions and runs a pass now.',
    params: SourceParams,
    body: z.strictObject({ every: Every.optional(), options: SourceOptions.optional(), status: z.enum(['active', 'paused']).optional() }),
    responses: {
      200: { description: 'Updated', schema: SourceSchema },
      400: { description: 'Invalid body', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      if (Object.keys(body).length === 0) throw invalidRequest('body: nothing to change (every, options or status)');
      const project = await projectForSources(s, principal, params.id);
      return { status: 200, body: sourceToWire(await s.sources.update(project.id, params.sid, body), s.sources) };
    },
  });
