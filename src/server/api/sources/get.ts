import { toIso } from '../../../core/clock.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { projectForSources } from './access.js';
import { SourceParams, SourceSchema, sourceToWire } from './wire.js';

/** Items with an error a source shows at most. */
const ITEM_ERRORS_SHOWN = 50;

export const getSource = (s: Services) =>
  defineRoute({
    name: 'sources.get',
    method: 'GET',
    path: '/projects/:id/sources/:sid',
    scope: 'read:documents',
    tag: 'sources',
    summary: `One source, with the items whose last fetch failed or that were passed over for their path (the latest ${ITEM_ERRORS_SHOWN}).`,
    params: SourceParams,
    responses: { 200: { description: 'The source', schema: SourceSchema }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const project = await projectForSources(s, principal, params.id, { reading: true });
      const source = await s.sources.get(project.id, params.sid);
      const errors = await s.sources.itemErrors(source.id, ITEM_ERRORS_SHOWN);
      // `at` as every time of the API is (RFC 3339), not the store's epoch milliseconds.
      const item_errors = { count: errors.count, items: errors.items.map((i) => ({ ...i, at: toIso(i.at) })) };
      return { status: 200, body: { ...sourceToWire(source, s.sources), item_errors } };
    },
  });
