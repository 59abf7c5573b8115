import { maxlengthFor } from '../../core/code-points.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { renderSVG } from 'uqr';
import { deviceOf } from '../device.js';
import { formatTime } from '../format.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';
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
  /** The OpenID Connect provider this server signs in with, and whether this account is linked to it. */
  provider?: { name: string; linked: boolean } | undefined;
  /** Which form failed, and why. */
  error?: { form: 'totp' | 'totp-disable' | 'recovery' | 'passkey' | 'passkey-sign-in'; message: string };
  /** A passkey's refused Rename: its field is shown open, with the name as it was typed. */
  renaming?: { id: string; name: string };
}

const METHODS: Record<string, string> = {
  password: 'password',
  'password+totp': 'password and authenticator code',
  'password+recovery': 'password and recovery code',
  'password+passkey': 'password and passkey',
  passkey: 'passkey',
  'sso+mfa': 'identity provider, with its MFA',
  'sso+totp': 'identity provider and authenticator code',
  'sso+recovery': 'identity provider and recovery code',
  'sso+passkey': 'identity provider and passkey',
  setup: 'setup link',
  invite: 'invitation link',
};

const when = (ms: number | null) => (ms === null ? 'never' : html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`);

const hidden = (d: Pick<SettingsSecurityData, 'csrfToken'>) => html`<input type="hidden" name="_csrf" value="${d.csrfToken}">`;

/** The secret of an otpauth:// URI, for typing into an app that cannot scan. */
const secretOf = (uri: string): string => new URL(uri).searchParams.get('secret') ?? '';

function totpSection(d: SettingsSecurityData) {
  const error = (form: 'totp' | 'totp-disable') => (d.error?.form === form ? html`<p class="error" role="alert">${d.error.message}</p>` : null);
  if (d.totp) {
    return html`<p id="totp-status"><strong>On.</strong> Signing in with your password asks for a code from your authenticator app.</p>
  ${error('totp-disable')}
  <form method="post" action="/settings/security/totp/disable" aria-label="Turn off the authenticator app">
    ${hidden(d)}<button type="submit" class="danger">Turn off</button>
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
  return html`<p id="totp-status">Off. An app such as Aegis, Google Authenticator or 1Password shows a new code every 30 seconds.</p>
  ${error('totp')}
  <form method="post" action="/settings/security/totp/start">
    ${hidden(d)}<input type="hidden" name="return_to" value="${d.returnTo ?? ''}">
    <button type="submit">Set up an authenticator app</button>
  </form>`;
}

/** The codes as a file to keep: one a line, with what they are for. */
const codesFile = (codes: string[]) =>
  `data:text/plain;charset=utf-8,${encodeURIComponent(`docsearch recovery codes\nEach signs you in once, with your password, when you have neither your passkey nor your app.\n\n${codes.join('\n')}\n`)}`;

function recoverySection(d: SettingsSecurityData) {
  const fresh = d.newRecoveryCodes
    ? html`<div class="notice recovery-codes" role="status">
  <p><strong>Save these recovery codes now.</strong> Each signs you in once, with your password, when you have neither your passkey nor your app. They will not be shown again.</p>
  <ol id="recovery-codes" class="codes">${d.newRecoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
  <div class="actions"><a href="${codesFile(d.newRecoveryCodes)}" download="docsearch-recovery-codes.txt" class="button" id="download-codes">Download</a><button type="button" data-print data-js hidden>Print</button>${
    d.returnTo ? html`<a href="${d.returnTo}" class="button primary">Continue</a>` : null
  }</div>
</div>`
    : null;
  if (!d.totp && d.passkeys.length === 0 && !d.newRecoveryCodes) return null;
  return html`<h2 id="recovery-heading">Recovery codes</h2>
  ${fresh}
  <p id="recovery-left">${d.recoveryCodesLeft} of 10 left.${d.recoveryCodesLeft < 3 ? html` <strong class="error">Make new ones before they run out.</strong>` : null}</p>
  ${d.error?.form === 'recovery' ? html`<p class="error" role="alert">${d.error.message}</p>` : null}
  <form method="post" action="/settings/security/recovery-codes" aria-labelledby="recovery-heading">
    ${hidden(d)}<button type="submit">Make new codes</button>
  </form>`;
}

/** Linking the account to the identity provider: signing in there proves the other half (docs/sso.md). */
function providerSection(d: SettingsSecurityData) {
  if (!d.provider) return null;
  const { name, linked } = d.provider;
  return html`<h2 id="provider-heading">${name}</h2>
  ${
    linked
      ? html`<p id="provider-linked">Your account is linked with ${name}: you can sign in with it.</p>`
      : html`<p>Sign in with ${name} as well as here: link your account, by signing in there once.</p>
  <form method="post" action="/login/sso" aria-labelledby="provider-heading">
    <input type="hidden" name="_csrf" value="${d.csrfToken}"><input type="hidden" name="link" value="yes"><button type="submit" id="provider-link">Link with ${name}</button>
  </form>`
  }`;
}

function passkeySection(d: SettingsSecurityData) {
  const error = (form: 'passkey' | 'passkey-sign-in') => (d.error?.form === form ? html`<p class="error" role="alert">${d.error.message}</p>` : null);
  const rows = d.passkeys.map((p) => {
    const typed = d.renaming?.id === p.id ? d.renaming.name : null;
    return html`<tr>
  <td>${p.name}${p.backedUp ? html` <span class="badge">synced</span>` : null}</td>
  <td data-label="Added">${when(p.createdAt)}</td>
  <td data-label="Last used">${when(p.lastUsedAt)}</td>
  <td class="actions-cell"><div class="row-actions">
    <details class="rename"${typed === null ? null : html` open`}><summary class="button small">${forRow('Rename', p.name)}</summary>
      <form method="post" action="/settings/security/passkeys/${p.id}/rename" class="inline-field">
        ${hidden(d)}<label class="visually-hidden" for="rename-${p.id}">New name for ${p.name}</label>
        <input id="rename-${p.id}" type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required value="${typed ?? p.name}">
        <button type="submit" class="small">${forRow('Save', p.name)}</button>
      </form>
    </details>
    <form method="post" action="/settings/security/passkeys/${p.id}/remove" class="inline">
      ${hidden(d)}<button type="submit" class="danger small">${forRow('Remove', p.name)}</button>
    </form>
  </div></td>
</tr>`;
  });
  return html`<h2 id="passkeys-heading">Passkeys</h2>
  <p class="muted">A passkey signs you in with your fingerprint, face or screen lock, and cannot be phished.</p>
  ${d.passkeysUnavailable ? html`<p class="muted">Passkeys are not available on this server: ${d.passkeysUnavailable}.</p>` : null}
  ${error('passkey')}
  ${d.passkeys.length ? html`<div class="table-wrap"><table class="rows" id="passkeys"><thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p class="muted">No passkeys yet.</p>`}
  ${d.passkeysUnavailable ? null : passkeyForm({ id: 'passkey-register', action: '/settings/security/passkeys', options: '/settings/security/passkeys/options', csrfToken: d.csrfToken, returnTo: d.returnTo, label: 'Add a passkey', ceremony: 'register', nameField: true, alone: d.passkeys.length === 0 || d.passkeySignIn })}
  ${
    d.passkeys.length
      ? html`${error('passkey-sign-in')}<form method="post" action="/settings/security/passkey-sign-in" class="stack">
    ${hidden(d)}
    <fieldset><legend>Your passkeys sign you in</legend>
      <label class="check"><input type="radio" name="sign_in" value="alone" ${d.passkeySignIn ? html`checked` : null}> On their own, without your password (recommended)</label>
      <label class="check"><input type="radio" name="sign_in" value="second-factor" ${d.passkeySignIn ? null : html`checked`}> After your password, as a second step</label>
    </fieldset>
    <button type="submit">Save</button>
  </form>`
      : null
  }`;
}

function sessionsSection(d: SettingsSecurityData) {
  const rows = d.sessions.map(
    (x) => html`<tr${x.current ? html` class="current"` : null}>
  <td>${deviceOf(x.userAgent)}${x.current ? html` <span class="badge accent">this one</span>` : null}</td>
  <td data-label="Address">${x.clientIp ?? 'unknown'}</td>
  <td data-label="Signed in">${when(x.createdAt)}${x.signedInWith ? html` <span class="muted">with ${METHODS[x.signedInWith] ?? x.signedInWith}</span>` : null}</td>
  <td data-label="Last seen">${when(x.lastSeenAt)}</td>
  <td class="actions-cell">${
    x.current
      ? null
      : html`<form method="post" action="/settings/security/sessions/${x.handle}/end" class="inline">${hidden(d)}<button type="submit" class="danger small">${forRow('End', `the session of ${deviceOf(x.userAgent)} from ${x.clientIp ?? 'an unknown address'}, last seen ${formatTime(x.lastSeenAt)}`)}</button></form>`
  }</td>
</tr>`,
  );
  return html`<h2 id="sessions-heading">Sessions</h2>
  <p class="muted">Where you are signed in. Ending a session signs that browser out at its next page.</p>
  <div class="table-wrap"><table class="rows" id="sessions"><thead><tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>
  ${
    d.sessions.length > 1
      ? html`<form method="post" action="/settings/security/sessions/end-others">${hidden(d)}<button type="submit" class="danger">End every other session</button></form>`
      : null
  }`;
}

/**
 * Settings → Security: passkeys first (what signs in best), the authenticator app, recovery codes (made with the
 * first second factor of any kind), and the signed-in sessions. Sensitive changes ask for a recent proof (sudo.ts).
 */
export function settingsSecurityPage(d: SettingsSecurityData) {
  return layout(
    { title: 'Security', user: d.user, csrfToken: d.csrfToken, active: 'security', wide: true, script: 'passkeys.js' },
    html`<section class="card">
  <h1>Security</h1>
  ${
    d.mustEnrol
      ? html`<p class="error" role="alert" id="enrol-required">This server requires a second factor for your account. Add a passkey or set up an authenticator app to go on.</p>`
      : null
  }
  ${passkeySection(d)}
  <h2 id="totp-heading">Authenticator app</h2>
  ${totpSection(d)}
  ${recoverySection(d)}
  ${providerSection(d)}
  ${sessionsSection(d)}
</section>`,
  );
}
