import { html } from '../html.js';
import { layout } from './layout.js';
import { passkeyForm } from './login.js';

export interface ConfirmAccessData {
  user: { email: string };
  csrfToken: string;
  /** What waits for the confirmation, as a phrase: "add a passkey", "make a new API key". */
  what: string;
  /** The form that waits (its action and fields), posted again once confirmed; or where to go back to. */
  then: { action: string; fields: [string, string][] } | null;
  returnTo: string;
  /** The account has passkeys and the server offers them: a passkey confirms too. */
  passkeys: boolean;
  error?: string;
}

/**
 * Sudo mode's question (GitHub's "Confirm access"): a sensitive change needs a recent proof of who is at the keyboard.
 * The password confirms and the waiting form goes on; a passkey confirms and the page it came from opens again.
 */
export function confirmAccessPage(d: ConfirmAccessData) {
  const keep = d.then
    ? html`<input type="hidden" name="then" value="${d.then.action}">${d.then.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`
    : html`<input type="hidden" name="return_to" value="${d.returnTo}">`;
  return layout(
    { title: 'Confirm access', user: d.user, csrfToken: d.csrfToken, ...(d.passkeys ? { script: 'passkeys.js' as const } : {}) },
    html`<section class="card narrow" id="confirm-access">
  <h1>Confirm access</h1>
  <p>To ${d.what}, confirm it is you: you have not signed in or confirmed in the last few minutes.</p>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/settings/confirm" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${keep}
    <input type="text" name="username" value="${d.user.email}" autocomplete="username" hidden>
    <label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
    <div class="actions"><button type="submit" class="primary">Confirm</button><a href="${d.returnTo}" class="button">Cancel</a></div>
  </form>
  ${
    d.passkeys
      ? html`<p class="muted or">or</p>${passkeyForm({ id: 'passkey-confirm', action: '/settings/confirm/passkey', options: '/settings/confirm/passkey/options', csrfToken: d.csrfToken, returnTo: d.returnTo, label: 'Confirm with a passkey', ceremony: 'sign-in' })}`
      : null
  }
</section>`,
  );
}
