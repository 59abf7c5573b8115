import { html } from '../html.js';

/**
 * The project page's tabs: its documents (the project page), its label vocabulary, and the sources that keep it
 * current. A viewer may not see a project's sources (403): no Sources tab for them.
 */
export function projectTabs(projectId: string, current: 'documents' | 'labels' | 'sources', role: 'viewer' | 'editor' | 'owner' = 'owner') {
  const tab = (name: typeof current, href: string, label: string) =>
    name === current ? html`<a href="${href}" class="tab current" aria-current="page">${label}</a>` : html`<a href="${href}" class="tab">${label}</a>`;
  return html`<nav class="tabs" aria-label="Project">${tab('documents', `/projects/${projectId}`, 'Documents')} ${tab('labels', `/projects/${projectId}/labels`, 'Labels')}${
    role === 'viewer' ? null : html` ${tab('sources', `/projects/${projectId}/sources`, 'Sources')}`
  }</nav>`;
}
