import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { projectForSources } from './access.js';
import { withBodyFieldErrors } from './field-errors.js';
import { LabelNames } from '../labels/names.js';
import { Every, SourceOptions, SourceParams, SourceSchema, sourceToWire } from './wire.js';
import { nothingToChange } from '../nothing-to-change.js';

export const updateSource = (s: Services) =>
  defineRoute({
    name: 'sources.update',
    method: 'PATCH',
    path: '/projects/:id/sources/:sid',
    scope: 'write:documents',
    tag: 'sources',
    summary:
      'Change the schedule or options (they replace the old ones; a secret option not given keeps its value), pause (`status: "paused"`) ' +
      'or resume (`status: "active"`): resuming a source the deletion guard paused confirms the deletions and runs a pass now. ' +
      '`labels` replace the label names it puts on its documents: those added go on every document it brought, those taken off come off them.',
    params: SourceParams,
    body: z.strictObject({ every: Every.optional(), options: SourceOptions.optional(), status: z.enum(['active', 'paused']).optional(), labels: LabelNames.optional() }),
    responses: {
      200: { description: 'Updated', schema: SourceSchema },
      400: { description: 'Invalid body', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      if (Object.keys(body).length === 0) throw nothingToChange('every, options, status or labels');
      const project = await projectForSources(s, principal, params.id);
      const before = await s.sources.get(project.id, params.sid);
      const updated = await withBodyFieldErrors(() => s.sources.update(project.id, params.sid, body));
      if (body.labels) {
        // What it brought carries its labels as they are now.
        const lower = (names: string[]) => new Set(names.map((n) => n.toLowerCase()));
        const [was, now] = [lower(before.labels), lower(updated.labels)];
        const add = updated.labels.filter((n) => !was.has(n.toLowerCase()));
        const remove = before.labels.filter((n) => !now.has(n.toLowerCase()));
        if (add.length + remove.length > 0) {
          const docs = await s.documents.getMany((await s.documents.ofSource(updated.id)).map((d) => d.id));
          await s.labelService.change(docs, { add, remove });
        }
      }
      return { status: 200, body: sourceToWire(updated, s.sources) };
    },
  });
