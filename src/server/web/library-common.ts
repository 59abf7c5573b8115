import type { DocumentRecord } from '../../store/sqlite/documents.js';
import type { Project } from '../../store/sqlite/projects.js';
import { messagePage } from '../../web/pages/message.js';
import type { DocumentRow } from '../../web/pages/project.js';
import type { ProjectRow } from '../../web/pages/projects.js';
import type { Services } from '../services.js';
import { render, type WebContext } from './session.js';

/** Most projects a page lists (the API pages through more). */
export const PROJECTS_SHOWN = 500;

/** A single query-string value ('' when absent or repeated). */
export function queryString(ctx: WebContext, name: string): string {
  const v = ctx.query[name];
  return typeof v === 'string' ? v : '';
}

export async function userProjects(s: Services, userId: string): Promise<Project[]> {
  await s.projects.ensureDefault(userId);
  return (await s.projects.list(userId, PROJECTS_SHOWN)).projects;
}

export const projectRow = (p: Project): ProjectRow => ({
  id: p.id,
  name: p.name,
  description: p.description,
  isDefault: p.isDefault,
  documentCount: p.documentCount,
  chunkCount: p.chunkCount,
  sizeBytes: p.sizeBytes,
});

export const documentView = (d: DocumentRecord): DocumentRow => ({
  id: d.id,
  filename: d.filename,
  contentType: d.contentType,
  sizeBytes: d.sizeBytes,
  status: d.status,
  progress: d.progress,
  chunkCount: d.chunkCount,
  error: d.error,
  createdAt: d.createdAt,
});

/** Another user's project or document is not found, exactly like one that never existed. */
export function renderNotFound(ctx: WebContext, user: { email: string }, what: 'project' | 'document'): void {
  render(
    ctx,
    messagePage({ title: 'Not found', message: `There is no such ${what} in your library.`, user, csrfToken: ctx.state.session?.csrfToken }),
    404,
  );
}
