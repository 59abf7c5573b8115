import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { projectForSources } from './access.js';
import { SourceSchema, sourceToWire } from './wire.js';

export const listSources = (s: Services) =>
  defineRoute({
    name: 'sources.list',
    method: 'GET',
    path: '/projects/:id/sources',
    scope: 'read:documents',
    tag: 'sources',
    summary: "A project's sources with their state, last pass and error.",
    params: IdParams,
    responses: { 200: { description: 'The sources', schema: z.object({ sources: z.array(SourceSchema) }) }, 404: { description: 'Project not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const project = await projectForSources(s, principal, params.id, { reading: true });
      return { status: 200, body: { sources: (await s.sources.list(project.id)).map((x) => sourceToWire(x, s.sources)) } };
    },
  });
