import { html } from '../html.js';

export type ProjectTab = 'documents' | 'sharing' | 'sources' | 'settings';

/**
 * The project page's tabs, one URL each: its documents (the project page), who it is shared with and its settings
 * (owners), and the sources that keep it current (editors and owners).
 */
export function projectTabs(projectId: string, current: ProjectTab, role: 'viewer' | 'editor' | 'owner' = 'owner') {
  // A viewer may see none of the other tabs (403): no tabs at all.
  if (role === 'viewer') return null;
  const tab = (name: ProjectTab, href: string, label: string) =>
    name === current ? html`<a href="${href}" class="tab current" aria-current="page">${label}</a>` : html`<a href="${href}" class="tab">${label}</a>`;
  const base = `/projects/${projectId}`;
  return html`<nav class="tabs" aria-label="Project">${tab('documents', base, 'Documents')} ${role === 'owner' ? tab('sharing', `${base}/sharing`, 'Sharing') : null} ${tab('sources', `${base}/sources`, 'Sources')} ${
    role === 'owner' ? tab('settings', `${base}/settings`, 'Settings') : null
  }</nav>`;
}
