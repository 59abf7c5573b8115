import type { Actor } from '../../../access/access-control.js';
import type { Role } from '../../../access/roles.js';
import { toIso } from '../../../core/clock.js';
import type { Project } from '../../../store/sql/projects.js';
import type { Services } from '../../services.js';

/** `mine`: the caller owns it of record; only their own default project is where their uploads go by default. */
export const projectToWire = (p: Project, role: Role, owner: string | null, mine: boolean) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  metadata: p.metadata,
  is_default: p.isDefault && mine,
  document_count: p.documentCount,
  chunk_count: p.chunkCount,
  size_bytes: p.sizeBytes,
  created_at: toIso(p.createdAt),
  updated_at: toIso(p.updatedAt),
  role,
  owner,
  language: p.language,
  ocr_languages: p.ocrLanguages,
});

/** Projects as the caller sees them: each with their role on it and its owner's e-mail. */
export async function projectsToWire(s: Services, actor: Actor, projects: Project[]) {
  const [roles, owners] = await Promise.all([s.access.roles(actor), s.users.emails(projects.map((p) => p.userId))]);
  return projects.map((p) => projectToWire(p, roles.get(p.id) ?? 'viewer', owners.get(p.userId) ?? null, p.userId === actor.userId));
}

/** One project as the caller sees it. */
export const oneProjectToWire = async (s: Services, actor: Actor, project: Project) => (await projectsToWire(s, actor, [project]))[0]!;
