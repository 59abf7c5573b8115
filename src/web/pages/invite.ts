import { html } from '../html.js';
import { layout } from './layout.js';

export interface InvitePageData {
  csrfToken: string;
  token: string;
  /** The address the invitation is for: the account's e-mail. */
  email: string;
  error?: string;
  minPasswordLength: number;
}

/** Accepting an invitation: the address an admin chose, and a password for it. */
export function invitePage(d: InvitePageData) {
  return layout(
    { title: 'Join docsearch' },
    html`<section class="card narrow">
  <h1>Join docsearch</h1>
  <p>You were invited as <strong id="invite-email">${d.email}</strong>. Choose a password to create your account; this link works once.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/invite" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="token" value="${d.token}">
    <input type="text" name="username" value="${d.email}" autocomplete="username" aria-label="E-mail" hidden>
    <label>Password <input type="password" name="password" autocomplete="new-password" minlength="${d.minPasswordLength}" required autofocus aria-describedby="password-rule"></label>
    <p class="muted" id="password-rule">At least ${d.minPasswordLength} characters.</p>
    <label>Repeat the password <input type="password" name="password2" autocomplete="new-password" minlength="${d.minPasswordLength}" required></label>
    <button type="submit" class="primary">Create account</button>
  </form>
</section>`,
  );
}
