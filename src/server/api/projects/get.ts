import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Project } from '../schemas.js';
import { projectToWire } from './wire.js';

export const getProject = (s: Services) =>
  defineRoute({
    name: 'projects.get',
    method: 'GET',
    path: '/projects/:id',
    scope: 'read:documents',
    tag: 'projects',
    summary: "One project with its counts. Another user's project is a 404.",
    params: IdParams,
    responses: { 200: { description: 'The project', schema: Project }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const project = await s.projects.get(principal.userId, params.id);
      if (!project) throw notFound('project');
      return { status: 200, body: projectToWire(project) };
    },
  });
