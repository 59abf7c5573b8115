import type { DocumentRecord } from '../../store/sql/documents.js';
import type { Project } from '../../store/sql/projects.js';
import { messagePage } from '../../web/pages/message.js';
import type { DocumentRow } from '../../web/pages/project.js';
import type { ProjectRow } from '../../web/pages/projects.js';
import type { Services } from '../services.js';
import { render } from './render.js';
import type { WebContext } from './session.js';

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

export const projectRow = (p: Project, indexing = 0): ProjectRow => ({
  id: p.id,
  name: p.name,
  description: p.description,
  isDefault: p.isDefault,
  documentCount: p.documentCount,
  chunkCount: p.chunkCount,
  sizeBytes: p.sizeBytes,
  indexing,
});

export const documentView = (d: DocumentRecord): DocumentRow => ({
  id: d.id,
  projectId: d.projectId,
  filename: d.filename,
  contentType: d.contentType,
  sizeBytes: d.sizeBytes,
  status: d.status,
  progress: d.progress,
  chunkCount: d.chunkCount,
  error: d.error,
  path: d.path,
  createdAt: d.createdAt,
});

/** Another user's project, document, key or application is not found, exactly like one that never existed. */
export function renderNotFound(ctx: WebContext, user: { email: string }, what: 'project' | 'document' | 'API key' | 'application' | 'connected app'): void {
  const where = what === 'project' || what === 'document' ? 'in your library' : 'in your account';
  render(ctx, messagePage({ title: 'Not found', message: `There is no such ${what} ${where}.`, user, csrfToken: ctx.state.session?.csrfToken }), 404);
}
