import { maxlengthFor } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';
import { html } from '../html.js';
import { layout, type Theme } from './layout.js';

const THEME_CHOICES: readonly [Theme, string][] = [
  ['system', 'System (light or dark as your device is set)'],
  ['light', 'Light'],
  ['dark', 'Dark'],
];

/** The `/` shortcut: off for speech input, or for a person who presses keys by accident. */
const SHORTCUT_CHOICES: readonly ['on' | 'off', string][] = [
  ['on', 'On: pressing / goes to the search box'],
  ['off', 'Off: / does nothing outside a text field'],
];

export interface SettingsAccountData {
  user: { email: string };
  csrfToken: string;
  minPasswordLength: number;
  /** This browser's theme. */
  theme: Theme;
  /** Whether `/` goes to the search box in this browser. */
  shortcut: boolean;
  /** Which form failed, and why: its message is shown beside that form. */
  error?: { form: 'password' | 'email' | 'appearance'; message: string };
  /** The email the email form was sent with, kept after an error. */
  newEmail?: string;
}

/**
 * Settings → Account: change the password (other sessions end) and the email, each with the current password; the
 * theme of this browser, and whether `/` goes to the search box in it.
 */
export function settingsAccountPage(d: SettingsAccountData) {
  const error = (form: 'password' | 'email' | 'appearance') =>
    d.error?.form === form ? html`<p class="error" role="alert" id="${form}-error">${d.error.message}</p>` : null;
  return layout(
    { title: 'Account', user: d.user, csrfToken: d.csrfToken, active: 'account', wide: true },
    html`<section class="card">
  <h1>Account</h1>
  <p>You are signed in as <strong id="account-email">${d.user.email}</strong>.</p>
  <h2 id="password-heading">Change password</h2>
  <p class="muted">Your other browser sessions are signed out; this one stays. API keys and connected apps keep working.</p>
  ${error('password')}
  <form method="post" action="/settings/account/password" class="stack" aria-labelledby="password-heading">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <input type="text" name="username" value="${d.user.email}" autocomplete="username" hidden>
    <label>Current password <input type="password" name="current_password" autocomplete="current-password" required></label>
    <label>New password <input type="password" name="new_password" autocomplete="new-password" minlength="${d.minPasswordLength}" required
      aria-describedby="password-rule"></label>
    <p class="muted" id="password-rule">At least ${d.minPasswordLength} characters.</p>
    <label>Repeat the new password <input type="password" name="new_password_again" autocomplete="new-password" minlength="${d.minPasswordLength}" required></label>
    <button type="submit">Change password</button>
  </form>
  <h2 id="email-heading">Change e-mail</h2>
  <p class="muted">You sign in with your e-mail address.</p>
  ${error('email')}
  <form method="post" action="/settings/account/email" class="stack" aria-labelledby="email-heading">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>New email <input type="email" name="email" maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}" autocomplete="email" required value="${d.newEmail ?? ''}"></label>
    <label>Current password <input type="password" name="password" autocomplete="current-password" required></label>
    <button type="submit">Change e-mail</button>
  </form>
  <h2 id="appearance-heading">Appearance</h2>
  ${error('appearance')}
  <form method="post" action="/settings/appearance" class="stack" aria-labelledby="appearance-heading">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <fieldset><legend>Theme in this browser</legend>
      ${THEME_CHOICES.map(([value, label]) => html`<label class="check"><input type="radio" name="theme" value="${value}"${d.theme === value ? html` checked` : null}> ${label}</label>`)}
    </fieldset>
    <fieldset><legend>Keyboard shortcut in this browser</legend>
      ${SHORTCUT_CHOICES.map(([value, label]) => html`<label class="check"><input type="radio" name="shortcut" value="${value}"${d.shortcut === (value === 'on') ? html` checked` : null}> ${label}</label>`)}
    </fieldset>
    <button type="submit">Save appearance</button>
  </form>
</section>`,
  );
}
