import { html } from '../html.js';

/** The project page's tabs: its documents (the project page) and the sources that keep it current. */
export function projectTabs(projectId: string, current: 'documents' | 'sources', role: 'viewer' | 'editor' | 'owner' = 'owner') {
  // A viewer may not see a project's sources (403): no Sources tab, and so no tabs at all.
  if (role === 'viewer') return null;
  const tab = (name: typeof current, href: string, label: string) =>
    name === current ? html`<a href="${href}" class="tab current" aria-current="page">${label}</a>` : html`<a href="${href}" class="tab">${label}</a>`;
  return html`<nav class="tabs" aria-label="Project">${tab('documents', `/projects/${projectId}`, 'Documents')} ${tab('sources', `/projects/${projectId}/sources`, 'Sources')}</nav>`;
}
