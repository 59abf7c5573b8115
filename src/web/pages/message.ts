import { html } from '../html.js';
import { layout } from './layout.js';

/**
 * A plain page with a heading and a sentence: errors, "link already used", and the like. Without the navigation
 * (no signed-in user) it links back to the start, so an error is never a dead end.
 */
export function messagePage(d: { title: string; message: string; user?: { email: string } | null; csrfToken?: string; next?: { href: string; label: string } }) {
  return layout(
    { title: d.title, user: d.user ?? null, csrfToken: d.csrfToken },
    html`<section class="card narrow"><h1>${d.title}</h1><p>${d.message}</p>${d.next ? html`<p><a href="${d.next.href}" class="button" id="next">${d.next.label}</a></p>` : null}${d.user ? null : html`<p><a href="/" class="back">Back to docsearch</a></p>`}</section>`,
  );
}
