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
  <p>This link works once. The account you create here can then create API keys and connect applications.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/setup">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="token" value="${d.token}">
    <label>Email <input type="email" name="email" value="${d.email ?? ''}" autocomplete="username" required autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="new-password" minlength="${d.minPasswordLength}" required></label>
    <button type="submit" class="primary">Create account</button>
  </form>
</section>`,
  );
}
