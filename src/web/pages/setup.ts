import { html } from '../html.js';
import { layout } from './layout.js';

export interface SetupPageData {
  csrfToken: string;
  token: string;
  email?: string;
  error?: string;
  minPasswordLength: number;
}

export function setupPage(d: SetupPageData) {
  return layout(
    { title: 'Set up docsearch' },
    html`<section class="card narrow">
  <h1>Create the first account</h1>
  <p>This link works once. The account you create here is this library's first <strong>administrator</strong>: besides
  searching and uploading, it invites the others, manages accounts and groups, and sets who may share with whom (Admin).</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/setup">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="token" value="${d.token}">
    <label>E-mail <input type="email" name="email" value="${d.email ?? ''}" autocomplete="username" required autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="new-password" minlength="${d.minPasswordLength}" required aria-describedby="setup-password-rule">
      <span class="hint" id="setup-password-rule">At least ${d.minPasswordLength} characters.</span></label>
    <label>Repeat the password <input type="password" name="password2" autocomplete="new-password" minlength="${d.minPasswordLength}" required></label>
    <button type="submit" class="primary">Create account</button>
  </form>
</section>`,
  );
}
