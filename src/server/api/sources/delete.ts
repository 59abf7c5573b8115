import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { projectForSources } from './access.js';
import { SourceParams } from './wire.js';

export const deleteSource = (s: Services) =>
  defineRoute({
    name: 'sources.delete',
    method: 'DELETE',
    path: '/projects/:id/sources/:sid',
    scope: 'write:documents',
    tag: 'sources',
    summary: 'Remove a source and the documents it made; with `?keep_documents=true` they stay, as uploads.',
    params: SourceParams,
    query: z.strictObject({ keep_documents: z.enum(['true', 'false', '1', '0']).optional().describe('keep the documents the source made') }),
    responses: { 204: { description: 'Removed' }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, query, principal }) {
      const project = await projectForSources(s, principal, params.id);
      await s.sources.remove(project.id, params.sid, query.keep_documents === 'true' || query.keep_documents === '1');
      return { status: 204 };
    },
  });
