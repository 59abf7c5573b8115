import { type Html, html } from '../html.js';

/** How the login page offers the identity provider (docs/sso.md). */
export interface SsoSignIn {
  /** The provider's name: "Sign in with <name>". */
  name: string;
  /** Whether it signs in from here (OpenID Connect); false: through the proxy in front (trusted headers) alone. */
  button: boolean;
  /** Whether the password form is offered beside it (--password-login). */
  passwordLogin: boolean;
}

/** The "Sign in with …" form, or where to sign in when neither it nor the password form is offered here. */
export function ssoSignIn(d: SsoSignIn & { csrfToken: string; returnTo?: string | undefined }): Html {
  if (!d.button) return d.passwordLogin ? html`` : html`<p id="sso-elsewhere">Password sign-in is off here: open docsearch through ${d.name} to sign in.</p>`;
  return html`${d.passwordLogin ? html`<p class="muted or">or</p>` : null}<form method="post" action="/login/sso" class="sso">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <button type="submit" id="sso"${d.passwordLogin ? null : html` class="primary"`}>Sign in with ${d.name}</button>
  </form>`;
}
