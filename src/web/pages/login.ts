import { html } from '../html.js';
import { layout } from './layout.js';
import { type SsoSignIn, ssoSignIn } from './sso-sign-in.js';

export interface LoginPageData {
  csrfToken: string;
  email?: string;
  error?: string;
  /** Where to go after login (a local path, checked by the caller). */
  returnTo?: string;
  /** Sign-in through the identity provider, when one is configured. */
  sso?: SsoSignIn | undefined;
}

export function loginPage(d: LoginPageData) {
  return layout(
    { title: 'Log in' },
    html`<section class="card narrow">
  <h1>Log in</h1>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${d.sso?.passwordLogin === false
    ? null
    : html`<form method="post" action="/login">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <label>Email <input type="email" name="email" value="${d.email ?? ''}" autocomplete="username" required autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
    <button type="submit">Log in</button>
  </form>`}
  ${d.sso ? ssoSignIn({ ...d.sso, csrfToken: d.csrfToken, returnTo: d.returnTo }) : null}
</section>`,
  );
}
