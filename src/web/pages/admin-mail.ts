import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';

export interface OutboxRowView {
  id: string;
  kind: string;
  to: string;
  subject: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
}

export interface AdminMailData {
  user: { email: string };
  csrfToken: string;
  configured: boolean;
  counts: { queued: number; sent: number; failed: number };
  mail: OutboxRowView[];
  /** The mail server (`--smtp-url` without its user or password) and the From of every mail, when mail is sent. */
  relay: string | null;
  from: string;
}

const KIND_WORDS: Record<string, string> = { invite: 'invitation', password_reset: 'password reset', sign_in_notice: 'new sign-in', source_alert: 'source alert', test: 'test' };

function state(m: OutboxRowView) {
  if (m.status === 'sent') return html`sent <span class="muted">${m.sentAt === null ? '' : formatTime(m.sentAt)}</span>`;
  if (m.status === 'failed') return html`<strong class="error">given up</strong>`;
  return m.attempts === 0 ? html`queued` : html`<strong>waiting</strong> <span class="muted">next try ${formatTime(m.nextAttemptAt)}</span>`;
}

/** Admin → Mail: the outbox (docs/mail.md): what waits and why, what was sent, what was given up. */
export function adminMailPage(d: AdminMailData) {
  const csrf = html`<input type="hidden" name="_csrf" value="${d.csrfToken}">`;
  return layout(
    { title: 'Mail', user: d.user, csrfToken: d.csrfToken, active: 'admin-mail', wide: true },
    html`<section class="card">
  <h1>Mail</h1>
  ${
    d.configured
      ? html`<p>${d.counts.queued} waiting, ${d.counts.sent} sent, ${d.counts.failed} given up (the last 30 days). A mail that cannot be sent is tried again, backing off, for about five hours.</p>
  <p id="relay">Mail goes out through <code>${d.relay}</code> (<code>--smtp-url</code>) from <code>${d.from}</code> (<code>--smtp-from</code>).</p>
  <div class="row-form">
    <form method="post" action="/admin/mail/test" class="inline">${csrf}<button type="submit">Send me a test mail</button></form>
    ${d.counts.queued > 0 ? html`<form method="post" action="/admin/mail/retry" class="inline">${csrf}<button type="submit">Retry waiting mail now</button></form>` : null}
  </div>`
      : html`<p class="notice">This server sends no mail: start it with <code>--smtp-url</code> (docs/mail.md). Invitations and reset links are shown to you instead, to send yourself.</p>`
  }
  ${
    d.mail.length === 0
      ? html`<p class="empty">No mail yet.</p>`
      : html`<div class="scroll"><table class="mail rows" aria-label="Outbox">
    <thead><tr><th scope="col">To</th><th scope="col">What</th><th scope="col">Made</th><th scope="col">State</th><th scope="col">Tries</th><th scope="col">Mail server's answer</th></tr></thead>
    <tbody>${d.mail.map(
      (m) => html`<tr data-mail-id="${m.id}">
  <td>${m.to}</td>
  <td data-label="What">${KIND_WORDS[m.kind] ?? m.kind}</td>
  <td data-label="Made">${formatTime(m.createdAt)}</td>
  <td data-label="State">${state(m)}</td>
  <td class="num" data-label="Tries">${m.attempts}</td>
  <td data-label="Answer">${m.lastError ?? html`<span class="muted">—</span>`}</td>
</tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`,
  );
}
