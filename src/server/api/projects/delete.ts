import { conflict, notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

export const deleteProject = (s: Services) =>
  defineRoute({
    name: 'projects.delete',
    method: 'DELETE',
    path: '/projects/:id',
    scope: 'write:documents',
    tag: 'projects',
    summary: 'Delete a project and every document in it. The default project cannot be deleted.',
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'The default project', schema: ErrorBody },
    },
    async handler({ params, principal }) {
      const project = await s.projects.get(principal.userId, params.id);
      if (!project) throw notFound('project');
      if (project.isDefault) throw conflict('the default project cannot be deleted');
      await s.projectRemoval.remove(principal.userId, project.id);
      return { status: 204 };
    },
  });
