import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Project } from '../schemas.js';
import { oneProjectToWire } from './wire.js';

export const getProject = (s: Services) =>
  defineRoute({
    name: 'projects.get',
    method: 'GET',
    path: '/projects/:id',
    scope: 'read:documents',
    tag: 'projects',
    summary: "One project with its counts, the caller's role and its owner. A project the caller may not read is a 404.",
    params: IdParams,
    responses: { 200: { description: 'The project', schema: Project }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const { project } = await s.access.project(principal, params.id, 'read');
      return { status: 200, body: await oneProjectToWire(s, principal, project) };
    },
  });
