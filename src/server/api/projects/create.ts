import { z } from 'zod';
import { conflict } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Project } from '../schemas.js';
import { ProjectDescription, ProjectMetadata, ProjectName } from './fields.js';
import { projectToWire } from './wire.js';

export const createProject = (s: Services) =>
  defineRoute({
    name: 'projects.create',
    method: 'POST',
    path: '/projects',
    scope: 'write:documents',
    tag: 'projects',
    summary: 'Create a project, owned by the caller. Names are unique per owner (case-insensitive).',
    body: z.strictObject({ name: ProjectName, description: ProjectDescription.optional(), metadata: ProjectMetadata.optional() }),
    responses: {
      201: { description: 'Created', schema: Project },
      400: { description: 'Invalid body', schema: ErrorBody },
      403: { description: 'A key limited to some projects', schema: ErrorBody },
      409: { description: 'Name taken', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      s.access.requireCreate(principal);
      await s.projects.ensureDefault(principal.userId);
      const project = await s.projects.create(principal.userId, body);
      if (!project) throw conflict(`a project named "${body.name}" already exists`);
      return { status: 201, body: projectToWire(project, 'owner', (await s.users.emails([principal.userId])).get(principal.userId) ?? null, true) };
    },
  });
