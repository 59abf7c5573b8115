import { conflict } from '../../../core/errors.js';
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
    summary: "Delete a project and every document in it (owners only). An owner's default project cannot be deleted.",
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'Not an owner of the project', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'The default project', schema: ErrorBody },
    },
    async handler({ params, principal }) {
      const { project } = await s.access.project(principal, params.id, 'manage');
      if (project.isDefault) throw conflict('the default project cannot be deleted');
      await s.projectRemoval.remove(project.id);
      return { status: 204 };
    },
  });
