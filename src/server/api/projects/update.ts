import { z } from 'zod';
import { conflict, invalidRequest, notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Project } from '../schemas.js';
import { ProjectDescription, ProjectMetadata, ProjectName } from './fields.js';
import { projectToWire } from './wire.js';

export const updateProject = (s: Services) =>
  defineRoute({
    name: 'projects.update',
    method: 'PATCH',
    path: '/projects/:id',
    scope: 'write:documents',
    tag: 'projects',
    summary: 'Rename a project or change its description or metadata (metadata is replaced whole).',
    params: IdParams,
    body: z.strictObject({ name: ProjectName.optional(), description: ProjectDescription.optional(), metadata: ProjectMetadata.optional() }),
    responses: {
      200: { description: 'Updated', schema: Project },
      400: { description: 'Invalid body', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'Name taken', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      if (Object.keys(body).length === 0) throw invalidRequest('body: nothing to change (name, description or metadata)');
      const result = await s.projects.update(principal.userId, params.id, body);
      if (result === 'conflict') throw conflict(`a project named "${body.name}" already exists`);
      if (!result) throw notFound('project');
      return { status: 200, body: projectToWire(result) };
    },
  });
