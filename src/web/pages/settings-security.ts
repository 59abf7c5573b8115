import { renderSVG } from 'uqr';
import { deviceOf } from '../device.js';
import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { passkeyForm } from './login.js';

export interface SecurityPasskey {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  backedUp: boolean;
}

export interface SecuritySession {
  handle: string;
  current: boolean;
  createdAt: number;
  lastSeenAt: number;
  clientIp: string | null;
  userAgent: string | null;
  signedInWith: string | null;
}

export interface SettingsSecurityData {
  user: { email: string };
  csrfToken: string;
  /** `--require-2fa` asks this account for a second factor it does not have yet. */
  mustEnrol: boolean;
  /** Where to go on once a second factor is set up (the page the account was sent here from). */
  returnTo?: string;
  totp: boolean;
  /** The `otpauth://` URI of an authenticator app being set up (its QR code is shown). */
  pendingTotp: string | null;
  recoveryCodesLeft: number;
  /** Recovery codes just made: shown this once. */
  newRecoveryCodes?: string[];
  /** Why this server offers no passkeys, or null when it does. */
  passkeysUnavailable: string | null;
  passkeys: SecurityPasskey[];
  passkeySignIn: boolean;
  sessions: SecuritySession[];
  /** Which form failed, and why. */
  error?: { form: 'totp' | 'totp-disable' | 'recovery' | 'passkey' | 'passkey-sign-in'; message: string };
}

const METHODS: Record<string, string> = {
  password: 'password',
  'password+totp': 'password and authenticator code',
  'password+recovery': 'password and recovery code',
  'password+passkey': 'password and passkey',
  passkey: 'passkey',
  setup: 'setup link',
  invite: 'invitation link',
};

const when = (ms: number | null) => (ms === null ? 'never' : html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`);

const hidden = (d: Pick<SettingsSecurityData, 'csrfToken'>) => html`<input type="hidden" name="_csrf" value="${d.csrfToken}">`;

const passwordField = html`<label>Current password <input type="password" name="password" autocomplete="current-password" required></label>`;

/** The secret of an otpauth:// URI, for typing into an app that cannot scan. */
const secretOf = (uri: string): string => new URL(uri).searchParams.get('secret') ?? '';

function totpSection(d: SettingsSecurityData) {
  const error = (form: 'totp' | 'totp-disable') => (d.error?.form === form ? html`<p class="error" role="alert">${d.error.message}</p>` : null);
  if (d.totp) {
    return html`<p id="totp-status"><strong>On.</strong> Signing in with your password asks for a code from your authenticator app.</p>
  ${error('totp-disable')}
  <form method="post" action="/settings/security/totp/disable" class="stack" aria-label="Turn off the authenticator app">
    ${hidden(d)}${passwordField}
    <button type="submit" class="danger">Turn off</button>
  </form>`;
  }
  if (d.pendingTotp) {
    const qr = `data:image/svg+xml;base64,${Buffer.from(renderSVG(d.pendingTotp)).toString('base64')}`;
    return html`<p>Scan this code with your authenticator app (or enter the key), then type the six-digit code it shows.</p>
  <img src="${qr}" width="200" height="200" alt="QR code of the authenticator key" class="qr">
  <p>Key: <code id="totp-secret">${secretOf(d.pendingTotp)}</code></p>
  <p class="muted">Or open <a id="totp-uri" href="${d.pendingTotp}">this otpauth link</a> on the device that has the app.</p>
  ${error('totp')}
  <form method="post" action="/settings/security/totp" class="stack" aria-label="Confirm the authenticator app">
    ${hidden(d)}<input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <label>Code from the app <input type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required autofocus></label>
    <button type="submit" class="primary">Turn on</button>
  </form>`;
  }
  return html`<p id="totp-status">Off.</p>
  ${error('totp')}
  <form method="post" action="/settings/security/totp/start">
    ${hidden(d)}<input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <button type="submit">Set up an authenticator app</button>
  </form>`;
}

function recoverySection(d: SettingsSecurityData) {
  const fresh = d.newRecoveryCodes
    ? html`<div class="notice" role="status">
  <p><strong>Save these recovery codes now.</strong> Each signs you in once when you have neither your app nor a passkey. They will not be shown again.</p>
  <ol id="recovery-codes" class="codes">${d.newRecoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
  ${d.returnTo ? html`<p><a href="${d.returnTo}">Continue</a></p>` : null}
</div>`
    : null;
  if (!d.totp && d.passkeys.length === 0 && !d.newRecoveryCodes) return null;
  return html`<h2 id="recovery-heading">Recovery codes</h2>
  ${fresh}
  <p id="recovery-left">${d.recoveryCodesLeft} of 10 left.</p>
  ${d.error?.form === 'recovery' ? html`<p class="error" role="alert">${d.error.message}</p>` : null}
  <form method="post" action="/settings/security/recovery-codes" class="stack" aria-labelledby="recovery-heading">
    ${hidden(d)}${passwordField}
    <button type="submit">Make new codes</button>
  </form>`;
}

function passkeySection(d: SettingsSecurityData) {
  const error = (form: 'passkey' | 'passkey-sign-in') => (d.error?.form === form ? html`<p class="error" role="alert">${d.error.message}</p>` : null);
  const rows = d.passkeys.map(
    (p) => html`<tr>
  <td>${p.name}${p.backedUp ? html` <span class="muted">(synced)</span>` : null}</td>
  <td data-label="Added">${when(p.createdAt)}</td>
  <td data-label="Last used">${when(p.lastUsedAt)}</td>
  <td>
    <form method="post" action="/settings/security/passkeys/${p.id}/rename" class="inline">
      ${hidden(d)}<label class="visually-hidden" for="rename-${p.id}">New name for ${p.name}</label>
      <input id="rename-${p.id}" type="text" name="name" maxlength="100" required value="${p.name}">
      <button type="submit">Rename</button>
    </form>
    <form method="post" action="/settings/security/passkeys/${p.id}/remove" class="inline">
      ${hidden(d)}<label class="visually-hidden" for="remove-${p.id}">Current password to remove ${p.name}</label>
      <input id="remove-${p.id}" type="password" name="password" autocomplete="current-password" placeholder="Current password" required>
      <button type="submit" class="danger">Remove</button>
    </form>
  </td>
</tr>`,
  );
  return html`<h2 id="passkeys-heading">Passkeys</h2>
  ${d.passkeysUnavailable ? html`<p class="muted">Passkeys are not available on this server: ${d.passkeysUnavailable}.</p>` : null}
  ${error('passkey')}
  ${d.passkeys.length ? html`<div class="table-wrap"><table class="rows" id="passkeys"><thead><tr><th>Name</th><th>Added</th><th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p class="muted">No passkeys yet.</p>`}
  ${d.passkeysUnavailable ? null : passkeyForm({ id: 'passkey-register', action: '/settings/security/passkeys', options: '/settings/security/passkeys/options', csrfToken: d.csrfToken, returnTo: d.returnTo, label: 'Add a passkey', ceremony: 'register', nameField: true })}
  ${
    d.passkeys.length
      ? html`${error('passkey-sign-in')}<form method="post" action="/settings/security/passkey-sign-in" class="stack">
    ${hidden(d)}
    <fieldset><legend>Use a passkey</legend>
      <label class="check"><input type="radio" name="sign_in" value="second-factor" ${d.passkeySignIn ? null : html`checked`}> after my password, as a second factor</label>
      <label class="check"><input type="radio" name="sign_in" value="alone" ${d.passkeySignIn ? html`checked` : null}> to sign in without my password</label>
    </fieldset>
    <button type="submit">Save</button>
  </form>`
      : null
  }`;
}

function sessionsSection(d: SettingsSecurityData) {
  const rows = d.sessions.map(
    (x) => html`<tr${x.current ? html` class="current"` : null}>
  <td>${deviceOf(x.userAgent)}${x.current ? html` <strong>(this one)</strong>` : null}</td>
  <td data-label="Address">${x.clientIp ?? 'unknown'}</td>
  <td data-label="Signed in">${when(x.createdAt)}${x.signedInWith ? html` <span class="muted">with ${METHODS[x.signedInWith] ?? x.signedInWith}</span>` : null}</td>
  <td data-label="Last seen">${when(x.lastSeenAt)}</td>
  <td>${
    x.current
      ? null
      : html`<form method="post" action="/settings/security/sessions/${x.handle}/end" class="inline">${hidden(d)}<button type="submit" class="link">End</button></form>`
  }</td>
</tr>`,
  );
  return html`<h2 id="sessions-heading">Sessions</h2>
  <p class="muted">Where you are signed in. Ending a session signs that browser out at its next page.</p>
  <div class="table-wrap"><table class="rows" id="sessions"><thead><tr><th>Device</th><th>Address</th><th>Signed in</th><th>Last seen</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>
  ${
    d.sessions.length > 1
      ? html`<form method="post" action="/settings/security/sessions/end-others">${hidden(d)}<button type="submit">End every other session</button></form>`
      : null
  }`;
}

/** Settings → Security: the second factors (authenticator app, recovery codes, passkeys) and the signed-in sessions. */
export function settingsSecurityPage(d: SettingsSecurityData) {
  return layout(
    { title: 'Security', user: d.user, csrfToken: d.csrfToken, active: 'security', wide: true, script: 'passkeys.js' },
    html`<section class="card">
  <h1>Security</h1>
  ${
    d.mustEnrol
      ? html`<p class="error" role="alert" id="enrol-required">This server requires a second factor for your account. Set up an authenticator app or add a passkey to go on.</p>`
      : null
  }
  <h2 id="totp-heading">Authenticator app</h2>
  ${totpSection(d)}
  ${recoverySection(d)}
  ${passkeySection(d)}
  ${sessionsSection(d)}
</section>`,
  );
}
