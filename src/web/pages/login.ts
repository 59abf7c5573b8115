import { maxlengthFor } from '../../core/code-points.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { type SsoSignIn, ssoSignIn } from './sso-sign-in.js';

export interface LoginPageData {
  csrfToken: string;
  email?: string;
  error?: string;
  /** Where to go after login (a local path, checked by the caller). */
  returnTo?: string;
  /** Offer "Sign in with a passkey" (the server can: see auth/passkeys.ts relyingPartyOf). */
  passkeys?: boolean;
  /** Sign-in through the identity provider, when one is configured. */
  sso?: SsoSignIn | undefined;
}

/**
 * A passkey ceremony's form, run by /static/passkeys.js (hidden until that script finds WebAuthn in the browser):
 * it asks `options` for a challenge, lets the browser sign it, and posts the answer to `action` as JSON.
 */
export function passkeyForm(d: {
  id: string;
  action: string;
  options: string;
  csrfToken: string;
  returnTo?: string | undefined;
  label: string;
  ceremony: 'sign-in' | 'register';
  nameField?: boolean;
  /** A new passkey's choice (checked unless the person chose otherwise before): it signs in without the password. */
  alone?: boolean;
  /** The sign-in page's: the browser offers passkeys in the e-mail field's suggestions (conditional mediation). */
  autofill?: boolean;
  /** The view's main action (the second step of a passkey-only account). */
  primary?: boolean;
}) {
  return html`<form id="${d.id}" method="post" action="${d.action}" data-passkey="${d.ceremony}" data-options="${d.options}"${d.autofill ? html` data-autofill` : null} class="stack passkey" hidden>
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    ${d.nameField ? html`<label>Name <input type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required aria-describedby="${d.id}-name-hint"><span class="hint" id="${d.id}-name-hint">Where it lives, e.g. “Work laptop” or “Phone”.</span></label>` : null}
    ${d.alone !== undefined ? html`<label class="check"><input type="checkbox" name="alone"${d.alone ? html` checked` : null}> It signs me in on its own, without my password</label>` : null}
    <p class="error" role="alert" hidden></p>
    <div class="actions"><button type="submit"${d.primary ? html` class="primary"` : null}>${d.label}</button></div>
  </form>`;
}

export function loginPage(d: LoginPageData) {
  return layout(
    { title: 'Sign in', ...(d.passkeys ? { script: 'passkeys.js' as const } : {}) },
    html`<section class="card narrow">
  <h1>Sign in</h1>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${d.sso?.passwordLogin === false
    ? null
    : html`<form method="post" action="/login">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <label>E-mail <input type="email" name="email" value="${d.email ?? ''}" autocomplete="${d.passkeys ? 'username webauthn' : 'username'}" required autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
    <div class="actions"><button type="submit" class="primary">Sign in</button></div>
  </form>
  <p><a href="/forgot-password" id="forgot-password">Forgot password?</a></p>`}
  ${
    d.passkeys && d.sso?.passwordLogin !== false
      ? html`<div class="passkey-choice" hidden><p class="muted or">or</p>${passkeyForm({ id: 'passkey-sign-in', action: '/login/passkey', options: '/login/passkey/options', csrfToken: d.csrfToken, returnTo: d.returnTo, label: 'Sign in with a passkey', ceremony: 'sign-in', autofill: true })}</div>`
      : null
  }
  ${d.sso ? ssoSignIn({ ...d.sso, csrfToken: d.csrfToken, returnTo: d.returnTo }) : null}
</section>`,
  );
}

export interface SecondStepPageData {
  csrfToken: string;
  returnTo?: string;
  error?: string;
  /** The account has an authenticator app (else the code field takes recovery codes only). */
  totp: boolean;
  /** The account has passkeys, and this server can use them. */
  passkeys: boolean;
}

/**
 * The second step of a password sign-in: a code (form field `code`), or a passkey. An account with an authenticator
 * app is asked for its code first; one with passkeys only, for a passkey, with its recovery codes one click away.
 */
export function secondStepPage(d: SecondStepPageData) {
  const codeForm = (focus: boolean) => html`<form method="post" action="/login/verify" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <label>${d.totp ? 'Code from your authenticator app, or a recovery code' : 'A recovery code'}
      <input type="text" name="code" autocomplete="one-time-code" ${d.totp ? html`inputmode="numeric"` : null} maxlength="32" required${focus ? html` autofocus` : null}></label>
    <div class="actions"><button type="submit"${d.totp ? html` class="primary"` : null}>Verify</button></div>
  </form>`;
  const passkeyOnly = d.passkeys && !d.totp;
  return layout(
    { title: 'Two-factor sign-in', ...(d.passkeys ? { script: 'passkeys.js' as const } : {}) },
    html`<section class="card narrow">
  <h1>Two-factor sign-in</h1>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${d.passkeys ? passkeyForm({ id: 'passkey-second-factor', action: '/login/passkey', options: '/login/passkey/options', csrfToken: d.csrfToken, returnTo: d.returnTo, label: 'Use your passkey', ceremony: 'sign-in', primary: passkeyOnly }) : null}
  ${passkeyOnly ? html`<details class="fold" id="use-recovery-code"${d.error ? html` open` : null}><summary>Use a recovery code instead</summary>${codeForm(false)}</details>` : codeForm(true)}
  <form method="post" action="/logout" class="inline">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <button type="submit" class="link">Cancel and sign out</button>
  </form>
</section>`,
  );
}
