import { maxlengthFor } from '../../core/code-points.js';
import { MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS } from '../../core/name-limits.js';
import { formatBytes, plural } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  isDefault: boolean;
  documentCount: number;
  chunkCount: number;
  sizeBytes: number;
  /** Documents still queued or processing. */
  indexing: number;
  /** The viewer's role on it (docs/permissions.md). */
  role: 'viewer' | 'editor' | 'owner';
  /** The e-mail of its owner of record when that is someone else (a project shared with the viewer); else null. */
  sharedBy: string | null;
  /** Whom else it is shared with, on the projects the viewer owns (owners see members); else null. */
  sharedWith: { people: number; groups: number } | null;
}

/** "shared with 2 people and 1 group", or "not shared". */
export const sharedWithNote = ({ people, groups }: { people: number; groups: number }): string => {
  const parts = [people > 0 ? plural(people, 'person', 'people') : '', groups > 0 ? plural(groups, 'group') : ''].filter(Boolean);
  return parts.length === 0 ? 'not shared' : `shared with ${parts.join(' and ')}`;
};

/** "still indexing 3 documents", or nothing when all are done. */
export const indexingNote = (n: number): string => (n > 0 ? `still indexing ${plural(n, 'document')}` : '');

export interface ProjectsPageData {
  user: { email: string };
  csrfToken: string;
  projects: ProjectRow[];
  error?: string;
  /** Form values to keep after an error. */
  form?: { name: string; description: string };
}

/** "owner", "editor · shared by alice@example.com": how the viewer holds a project. */
export const roleNote = (p: Pick<ProjectRow, 'role' | 'sharedBy'>): string => (p.sharedBy ? `${p.role} · shared by ${p.sharedBy}` : p.role);

function projectsTable(projects: ProjectRow[], label: string) {
  const rows = projects.map(
    (p) => html`<tr data-project-id="${p.id}">
  <td><a href="/projects/${p.id}" class="project-name">${p.name}</a>${p.isDefault && !p.sharedBy ? html` <span class="badge">default</span>` : null}
    ${p.description ? html`<br><span class="muted">${p.description}</span>` : null}
    ${p.indexing > 0 ? html`<br><span class="indexing" role="status">Still indexing ${p.indexing} document${p.indexing === 1 ? '' : 's'}</span>` : null}</td>
  <td data-label="Your role"><span class="role role-${p.role}">${p.role}</span>${p.sharedBy ? html`<br><span class="muted shared-by">shared by ${p.sharedBy}</span>` : null}${
    p.sharedWith ? html`<br><a class="muted shared-with" href="/projects/${p.id}/sharing">${sharedWithNote(p.sharedWith)}</a>` : null
  }</td>
  <td class="num" data-label="Documents">${p.documentCount}</td>
  <td class="num" data-label="Chunks">${p.chunkCount}</td>
  <td class="num" data-label="Size">${formatBytes(p.sizeBytes)}</td>
</tr>`,
  );
  return html`<div class="scroll"><table class="projects rows" aria-label="${label}">
    <thead><tr><th scope="col">Project</th><th scope="col">Your role</th><th scope="col" class="num">Documents</th><th scope="col" class="num">Chunks</th><th scope="col" class="num">Size</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

export function projectsPage(d: ProjectsPageData) {
  const own = d.projects.filter((p) => !p.sharedBy);
  const shared = d.projects.filter((p) => p.sharedBy);
  return layout(
    { title: 'Projects', user: d.user, csrfToken: d.csrfToken, active: 'projects', wide: true },
    html`<section class="card">
  <h1>Projects</h1>
  <p>Projects group documents: search all of them or one at a time, and share them with people or groups.</p>
  ${projectsTable(own, 'Your projects')}
  <h2 id="shared-with-me">Shared with me</h2>
  ${shared.length === 0 ? html`<p class="muted">Nobody has shared a project with you yet.</p>` : projectsTable(shared, 'Shared with me')}
  <h2>New project</h2>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/projects" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name <input type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required value="${d.form?.name ?? ''}"></label>
    <label>Description <textarea name="description" rows="2" maxlength="${maxlengthFor(MAX_DESCRIPTION_CHARS)}">${d.form?.description ?? ''}</textarea></label>
    <button type="submit" class="primary">Create project</button>
  </form>
</section>`,
  );
}
