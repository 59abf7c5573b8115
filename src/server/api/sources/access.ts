import type { Actor } from '../../../access/access-control.js';
import type { Project } from '../../../store/sql/projects.js';
import type { Services } from '../../services.js';

/**
 * The access check of sources, for every route and page that manages them: a source is managed by the project's
 * editors and owners (docs/permissions.md). Reading them (the list, one source) needs only `read:documents` of the
 * credential, but still an editor's role: a source's address and state are how the project is kept, not what it
 * holds. Someone who may not read the project gets 404, a viewer 403.
 */
export async function projectForSources(s: Pick<Services, 'access'>, actor: Actor, projectId: string, opts: { reading?: boolean } = {}): Promise<Project> {
  return (await s.access.project(actor, projectId, 'edit', opts.reading ? { scope: 'read:documents' } : {})).project;
}
