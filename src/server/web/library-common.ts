import { type Role, roleAllows } from '../../access/roles.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import type { Project } from '../../store/sql/projects.js';
import { messagePage } from '../../web/pages/message.js';
import type { DocumentRow } from '../../web/pages/project.js';
import type { ProjectRow } from '../../web/pages/projects.js';
import type { OpenedPassage } from '../../web/pages/view.js';
import { cursorAt, documentText } from '../api/documents/text.js';
import type { Services } from '../services.js';
import { render } from './render.js';
import type { WebContext, WebUser } from './session.js';

/** Most projects a page lists (the API pages through more). */
export const PROJECTS_SHOWN = 500;

/** A single query-string value ('' when absent or repeated). */
export function queryString(ctx: WebContext, name: string): string {
  const v = ctx.query[name];
  return typeof v === 'string' ? v : '';
}

/** Every project the user may read, their own default made when missing, each with their role and its owner. */
export async function userProjects(s: Services, user: WebUser): Promise<Project[]> {
  await s.projects.ensureDefault(user.id);
  return (await s.projects.listAmong(await s.access.readable(user.actor), PROJECTS_SHOWN)).projects;
}

/** The projects the user may upload into or move documents to (editor or owner). */
export async function editableProjects(s: Services, user: WebUser): Promise<Project[]> {
  const roles = await s.access.roles(user.actor);
  return (await userProjects(s, user)).filter((p) => roleAllows(roles.get(p.id) ?? 'viewer', 'edit'));
}

export async function projectRows(s: Services, user: WebUser, projects: Project[], indexing: Map<string, number> = new Map()): Promise<ProjectRow[]> {
  const [roles, owners, shares] = await Promise.all([s.access.roles(user.actor), s.users.emails(projects.map((p) => p.userId)), s.sharing.sharedWith(user.actor, projects)]);
  return projects.map((p) => ({
    ...projectRow(p, roles.get(p.id) ?? 'viewer', p.userId === user.id ? null : (owners.get(p.userId) ?? 'a deleted account'), indexing.get(p.id)),
    sharedWith: shares.get(p.id) ?? null,
  }));
}

const projectRow = (p: Project, role: Role, sharedBy: string | null, indexing = 0): Omit<ProjectRow, 'sharedWith'> => ({
  id: p.id,
  name: p.name,
  description: p.description,
  // Someone else's default project, shared, is not where this user's uploads go.
  isDefault: p.isDefault && sharedBy === null,
  documentCount: p.documentCount,
  chunkCount: p.chunkCount,
  sizeBytes: p.sizeBytes,
  indexing,
  role,
  sharedBy,
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
/** The documents that came attached to e-mail `id` and the user may read, by name (the viewer and the document page link them). */
export async function readableAttachments(s: Services, user: WebUser, id: string): Promise<{ id: string; filename: string }[]> {
  return (await s.access.documents(user.actor, await s.documents.attachmentsOf(id), 'read')).map((a) => ({ id: a.id, filename: a.filename }));
}

export function renderNotFound(ctx: WebContext, user: { email: string }, what: 'project' | 'document' | 'label' | 'source' | 'API key' | 'application' | 'connected app'): void {
  // A label or source gone (deleted in another tab) is not a project gone: the page said "no such project" for both.
  const where = what === 'project' || what === 'document' ? 'in your library' : what === 'label' || what === 'source' ? 'in this project (deleted already?)' : 'in your account';
  render(ctx, messagePage({ title: 'Not found', message: `There is no such ${what} ${where}.`, user, csrfToken: ctx.state.session?.csrfToken }), 404);
}

/**
 * The passage `?chunk=K&answer=S-E` names (a search result's "Open at this passage"): chunk K's text, and the answer
 * as the [S, E) slice of it the result showed. Null without one, or when the chunk is not this document's.
 */
export async function openedPassage(ctx: WebContext, s: Services, user: WebUser, doc: DocumentRecord): Promise<OpenedPassage | null> {
  const raw = queryString(ctx, 'chunk');
  if (!/^\d{1,9}$/.test(raw)) return null;
  const index = Number(raw);
  const text = await documentText(s, user.actor, doc.id, 1, cursorAt(doc, index));
  const chunk = text.pages[0]?.chunks[0];
  if (!chunk || chunk.index !== index) return null;
  const m = /^(\d{1,9})-(\d{1,9})$/.exec(queryString(ctx, 'answer'));
  const [start, end] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  const answer = end > start && end <= chunk.text.length ? chunk.text.slice(start, end).trim() : '';
  return {
    index,
    text: chunk.text,
    answer: answer || null,
    ...(chunk.page_start !== null ? { rows: [chunk.page_start, chunk.page_end ?? chunk.page_start] as [number, number] } : {}),
    sheet: chunk.heading?.split(' > ')[0] ?? null,
  };
}
