import { SEARCH_MODES, type SearchMode } from '../../search/query.js';
import type { SearchResult } from '../../search/service.js';
import { pageSpan } from '../format.js';
import { html } from '../html.js';
import { snippet } from '../snippet.js';
import { layout } from './layout.js';

export interface SearchPageData {
  user: { email: string };
  csrfToken: string;
  q: string;
  mode: SearchMode;
  /** The project filter ('' for all projects). */
  projectId: string;
  projects: { id: string; name: string }[];
  /** Undefined before a query was asked. */
  results?: SearchResult[];
  error?: string;
  warnings?: string[];
}

const MODE_LABELS: Record<SearchMode, string> = { hybrid: 'Hybrid (meaning + words)', vector: 'Meaning only', keyword: 'Words only' };

/** Where a result's original opens: a PDF at the result's page, in the browser's viewer. */
export function originalHref(r: SearchResult): string {
  const base = `/documents/${encodeURIComponent(r.document.id)}/file`;
  return r.document.content_type === 'application/pdf' && r.page_start !== undefined ? `${base}#page=${r.page_start}` : base;
}

function result(r: SearchResult, q: string) {
  const where = pageSpan(r.page_start, r.page_end);
  return html`<li class="result" data-document-id="${r.document.id}">
  <h2><a href="/documents/${r.document.id}" class="filename">${r.document.filename}</a></h2>
  <p class="meta"><a href="/projects/${r.project.id}" class="project">${r.project.name}</a>${where ? html` · <span class="page">${where}</span>` : null}${
    r.heading ? html` · <span class="heading">${r.heading}</span>` : null
  }</p>
  <p class="snippet">${snippet(r.text, r.highlights, q)}</p>
  <p class="links"><a href="${originalHref(r)}" class="original">Open the original${where ? html` at ${where}` : null}</a></p>
</li>`;
}

export function searchPage(d: SearchPageData) {
  const results =
    d.results === undefined
      ? null
      : d.results.length === 0
        ? html`<p class="muted" role="status">No passages match “${d.q}”. Try other words, another mode, or all projects.</p>`
        : html`<p class="muted" role="status">${d.results.length} result${d.results.length === 1 ? '' : 's'} for “${d.q}”</p>
<ol class="results">${d.results.map((r) => result(r, d.q))}</ol>`;
  return layout(
    { title: d.q ? `${d.q} – Search` : 'Search', user: d.user, csrfToken: d.csrfToken, active: 'search' },
    html`<section class="card">
  <h1>Search your library</h1>
  <form method="get" action="/search" class="search" role="search">
    <label class="grow">Search for <input type="search" name="q" value="${d.q}" maxlength="2000" required autofocus></label>
    <label>Project <select name="project">
      <option value="">All projects</option>
      ${d.projects.map((p) => html`<option value="${p.id}"${p.id === d.projectId ? html` selected` : null}>${p.name}</option>`)}
    </select></label>
    <label>Mode <select name="mode">
      ${SEARCH_MODES.map((m) => html`<option value="${m}"${m === d.mode ? html` selected` : null}>${MODE_LABELS[m]}</option>`)}
    </select></label>
    <button type="submit">Search</button>
  </form>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${(d.warnings ?? []).map((w) => html`<p class="notice" role="status">${w}</p>`)}
  ${results}
</section>`,
  );
}
