import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';

export interface NoticeRow {
  id: string;
  message: string;
  link: string | null;
  createdAt: number;
  read: boolean;
}

export interface NoticesData {
  user: { email: string; isAdmin?: boolean };
  csrfToken: string;
  /** This page of them, the last told first. */
  notices: NoticeRow[];
  /** How many of all the person's notices are unread (on this page or not). */
  unread: number;
  /** When the newest notice of this list was last told: "Mark all read" marks those up to it; null when none. */
  through: number | null;
  /** On an older page, how many notices were told (or told again) since the list was begun: they are on its first page. */
  toldSince: number;
  /** The link to the next (older) page, or null on the last. */
  older: string | null;
  /** On an older page, the link back to the newest; else null. */
  newest: string | null;
  error?: string;
}

/**
 * The bell's page: what needs the person (a source holding deletions or failing), the last told first (telling again
 * brings a notice to the top), a page at a time.
 */
export function noticesPage(d: NoticesData) {
  return layout(
    { title: 'Notices', user: d.user, csrfToken: d.csrfToken, active: 'notices' },
    html`<section class="card">
  <div class="page-head"><h1>Notices</h1>${
    d.unread > 0 && d.through !== null
      ? html`<form method="post" action="/notices/read" class="inline"><input type="hidden" name="_csrf" value="${d.csrfToken}"><input type="hidden" name="through" value="${String(d.through)}"><button type="submit">Mark all read</button></form>`
      : null
  }</div>
  <p class="muted">Sources of your projects that need you: deletions waiting for your confirmation, passes that keep failing. Owners and editors of a project are told, here and by e-mail when the server sends mail.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${
    d.toldSince > 0
      ? html`<p class="notice" id="told-since">${d.toldSince === 1 ? '1 notice was' : `${d.toldSince} notices were`} told since this list was opened: ${d.toldSince === 1 ? 'it is' : 'they are'} at the top of the <a href="/notices">newest notices</a>, not on this page.</p>`
      : null
  }
  ${
    d.notices.length === 0
      ? html`<p class="empty" id="no-notices">Nothing needs you.</p>`
      : html`<ul class="notices" id="notices">${d.notices.map(
          (n) =>
            html`<li data-notice-id="${n.id}"${n.read ? null : html` class="unread"`}>${n.read ? null : html`<span class="badge warn">new</span> `}${n.message}
    <span class="muted"><time datetime="${new Date(n.createdAt).toISOString()}">${formatTime(n.createdAt)}</time></span>${n.link ? html` <a href="${n.link}">Open</a>` : null}</li>`,
        )}</ul>`
  }
  ${
    d.newest || d.older
      ? html`<nav class="pager" aria-label="Pages">
    ${d.newest ? html`<a href="${d.newest}">← Newest notices</a>` : null}
    ${d.older ? html`<a href="${d.older}" rel="next" class="next">Older notices →</a>` : null}
  </nav>`
      : null
  }
</section>`,
  );
}
