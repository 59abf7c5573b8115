import { maxlengthFor } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';
import { html } from '../html.js';
import { layout } from './layout.js';

export interface ForgotPageData {
  csrfToken: string;
  /** The server can send mail; without it the page says to ask an admin. */
  canMail: boolean;
  /** After a request: the same words whatever the address (no account is revealed). */
  sent?: boolean;
  email?: string;
}

/** "Forgot password?": an address to mail a reset link to, or (without mail) who can help. */
export function forgotPasswordPage(d: ForgotPageData) {
  return layout(
    { title: 'Forgot password' },
    html`<section class="card narrow">
  <h1>Forgot your password?</h1>
  ${d.sent
    ? html`<p role="status">If an account here has the address <strong>${d.email ?? ''}</strong>, a link to set a new password is on its way to it. It works once, for an hour. No mail after a few minutes? Look in the spam folder, or ask an administrator of this docsearch.</p>
  <p><a href="/login">Back to sign-in</a></p>`
    : d.canMail
      ? html`<p>Give the e-mail of your account: we mail it a link that sets a new password.</p>
  <form method="post" action="/forgot-password" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>E-mail <input type="email" name="email" autocomplete="username" required autofocus maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}"></label>
    <button type="submit" class="primary">Mail me a link</button>
  </form>
  <p><a href="/login">Back to sign-in</a></p>`
      : html`<p>This docsearch sends no e-mail. Ask one of its administrators for a one-time link that sets a new password: they make it in Admin → Users.</p>
  <p><a href="/login">Back to sign-in</a></p>`}
</section>`,
  );
}

export interface ResetPageData {
  csrfToken: string;
  token: string;
  email: string;
  minPasswordLength: number;
  error?: string;
}

/** A reset link's page: a new password for the account, once. */
export function resetPasswordPage(d: ResetPageData) {
  return layout(
    { title: 'Set a new password' },
    html`<section class="card narrow">
  <h1>Set a new password</h1>
  <p>For <strong id="reset-email">${d.email}</strong>. This link works once; setting the password signs the account out of every browser.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/reset-password" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="token" value="${d.token}">
    <input type="text" name="username" value="${d.email}" autocomplete="username" aria-label="E-mail" hidden>
    <label>New password <input type="password" name="password" autocomplete="new-password" minlength="${d.minPasswordLength}" required autofocus aria-describedby="reset-password-rule">
      <span class="hint" id="reset-password-rule">At least ${d.minPasswordLength} characters.</span></label>
    <label>Repeat the new password <input type="password" name="password2" autocomplete="new-password" minlength="${d.minPasswordLength}" required></label>
    <button type="submit" class="primary">Set password</button>
  </form>
</section>`,
  );
}
