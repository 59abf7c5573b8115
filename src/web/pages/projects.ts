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
}

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

export function projectsPage(d: ProjectsPageData) {
  const rows = d.projects.map(
    (p) => html`<tr data-project-id="${p.id}">
  <td><a href="/projects/${p.id}" class="project-name">${p.name}</a>${p.isDefault ? html` <span class="badge">default</span>` : null}
    ${p.description ? html`<br><span class="muted">${p.description}</span>` : null}
    ${p.indexing > 0 ? html`<br><span class="indexing" role="status">Still indexing ${p.indexing} document${p.indexing === 1 ? '' : 's'}</span>` : null}</td>
  <td class="num" data-label="Documents">${p.documentCount}</td>
  <td class="num" data-label="Chunks">${p.chunkCount}</td>
  <td class="num" data-label="Size">${formatBytes(p.sizeBytes)}</td>
</tr>`,
  );
  return layout(
    { title: 'Projects', user: d.user, csrfToken: d.csrfToken, active: 'projects' },
    html`<section class="card">
  <h1>Projects</h1>
  <p>Projects group documents: search all of them or one at a time.</p>
  <div class="scroll"><table class="projects rows">
    <thead><tr><th scope="col">Project</th><th scope="col" class="num">Documents</th><th scope="col" class="num">Chunks</th><th scope="col" class="num">Size</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>
  <h2>New project</h2>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/projects" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name <input type="text" name="name" maxlength="100" required value="${d.form?.name ?? ''}"></label>
    <label>Description <textarea name="description" rows="2" maxlength="2000">${d.form?.description ?? ''}</textarea></label>
    <button type="submit">Create project</button>
  </form>
</section>`,
  );
}
