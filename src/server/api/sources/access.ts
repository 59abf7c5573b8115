import type { Principal } from '../../../auth/principal.js';
import { notFound } from '../../../core/errors.js';
import type { Project } from '../../../store/sql/projects.js';
import type { Services } from '../../services.js';

/**
 * The one access check of sources, for every route and page that manages them: a source is managed by whoever may
 * edit its project. Until projects are shared that is the project's user, checked as the project routes check it
 * (another user's project is not found); this is the function to make "an editor of this project".
 */
export async function projectForSources(s: Pick<Services, 'projects'>, principal: Pick<Principal, 'userId'>, projectId: string): Promise<Project> {
  const project = await s.projects.get(principal.userId, projectId);
  if (!project) throw notFound('project');
  return project;
}
