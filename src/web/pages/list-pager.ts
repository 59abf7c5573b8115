import { type Html, html } from '../html.js';

/**
 * A cursor-paged list's links: back to its first page and on to the next (the Documents list, the trash, a project's
 * labels). Nothing when the list has one page.
 */
export function listPager(first: string | null | undefined, next: string | null | undefined, label = 'Pages'): Html | null {
  if (!first && !next) return null;
  return html`<nav class="pager" aria-label="${label}">
    ${first ? html`<a href="${first}">← First page</a>` : null}
    ${next ? html`<a href="${next}" rel="next" class="next">Next page →</a>` : null}
  </nav>`;
}
