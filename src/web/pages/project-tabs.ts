import { html } from '../html.js';

export type ProjectTab = 'documents' | 'labels' | 'sharing' | 'sources' | 'settings';

/**
 * The project page's tabs, one URL each: its documents (the project page), its label vocabulary, who it is shared
 * with and its settings (owners), and the sources that keep it current (editors and owners: a viewer may not see a
 * project's sources, 403).
 */
export function projectTabs(projectId: string, current: ProjectTab, role: 'viewer' | 'editor' | 'owner' = 'owner') {
  const tab = (name: ProjectTab, href: string, label: string) =>
    name === current ? html`<a href="${href}" class="tab current" aria-current="page">${label}</a>` : html`<a href="${href}" class="tab">${label}</a>`;
  const base = `/projects/${projectId}`;
  return html`<nav class="tabs" aria-label="Project">${tab('documents', base, 'Documents')} ${tab('labels', `${base}/labels`, 'Labels')}${
    role === 'owner' ? html` ${tab('sharing', `${base}/sharing`, 'Sharing')}` : null
  }${role === 'viewer' ? null : html` ${tab('sources', `${base}/sources`, 'Sources')}`}${role === 'owner' ? html` ${tab('settings', `${base}/settings`, 'Settings')}` : null}</nav>`;
}
