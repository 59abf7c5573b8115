import { maxlengthFor } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS, MAX_INVITES } from '../../core/name-limits.js';
import { formatBytes, formatTime, plural } from '../format.js';
import { html } from '../html.js';
import { confirmPage } from './confirm.js';
import { copyRow } from './copy-row.js';
import { layout } from './layout.js';
import { forRow } from './row-action.js';

export interface AdminUserRow {
  id: string;
  email: string;
  isAdmin: boolean;
  /** When it was disabled (epoch ms), or null. */
  disabledAt: number | null;
  createdAt: number;
  /** The identity provider that sets the admin flag (not changed here), or null. */
  adminManagedBy: string | null;
  /** The last sign-in of any kind (epoch ms), or null. */
  lastSignInAt: number | null;
  /** The identity providers the account is linked at (empty: a local account). */
  providers: string[];
  twoFactor: { totp: boolean; passkeys: number };
  usage: { documents: number; bytes: number };
  /** The quota that applies to it (its own or --quota-default), or null: none. */
  quotaBytes: number | null;
}

export interface AdminInviteRow {
  id: string;
  email: string;
  admin: boolean;
  group: string | null;
  createdAt: number;
  expiresAt: number;
  /** Who made it: an admin's e-mail, or null for the operator. */
  by: string | null;
}

export interface AdminUsersData {
  user: { id: string; email: string };
  csrfToken: string;
  users: AdminUserRow[];
  invites: AdminInviteRow[];
  /** Local groups an invitation can put the new account in. */
  groups: { id: string; name: string }[];
  /** The server sends mail (--smtp-url): invitations and reset links can go out by mail. */
  canMail: boolean;
  /** Links just made (invitations, a reset link) that did not go out by mail: shown this once. */
  newLinks?: { id: string; label: string; link: string }[];
  /**
 * An invitation refused: why, and the form as it was sent, less the addresses that were invited. Or, with no error,
 * the form filled in from a link (a group page's "Invite … into this group").
 */
  invite?: InviteTyped;
}

export interface InviteTyped {
  error: string;
  /** What the same form did do (invitations mailed), said apart from the refusal. */
  done?: string;
  email: string;
  role: string;
  group: string;
  send: boolean;
}

/** A one-button form for a row's action. */
const rowAction = (action: string, csrfToken: string, label: string, row: string, fields: Record<string, string> = {}) =>
  html`<form method="post" action="${action}" class="inline"><input type="hidden" name="_csrf" value="${csrfToken}">${Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<button type="submit" class="small">${forRow(label, row)}</button></form>`;

function userRow(u: AdminUserRow, d: AdminUsersData) {
  const self = u.id === d.user.id;
  const base = `/admin/users/${u.id}`;
  return html`<tr data-user-id="${u.id}">
  <td>${u.email}${self ? html` <span class="badge">you</span>` : null}</td>
  <td data-label="Admin">${u.isAdmin ? 'admin' : html`<span class="muted">no</span>`}${u.adminManagedBy ? html` <span class="badge" title="Set by ${u.adminManagedBy}'s admin group at every sign-in: change it there">from ${u.adminManagedBy}</span>` : null}</td>
  <td data-label="Sign-in">${u.providers.length > 0 ? html`provider <span class="muted">(${u.providers.map(hostOf).join(', ')})</span>` : 'local'}</td>
  <td data-label="2FA">${secondFactors(u.twoFactor)}</td>
  <td data-label="Last sign-in">${u.lastSignInAt === null ? html`<span class="muted">never</span>` : formatTime(u.lastSignInAt)}</td>
  <td class="num" data-label="Uploads">${plural(u.usage.documents, 'document')} <span class="muted">· ${formatBytes(u.usage.bytes)}${u.quotaBytes === null ? '' : ` of ${formatBytes(u.quotaBytes)}`}</span></td>
  <td data-label="Status">${u.disabledAt === null ? 'active' : html`<strong class="error">disabled</strong> <span class="muted">since ${formatTime(u.disabledAt)}</span>`}</td>
  <td class="actions-cell">
    ${
      u.adminManagedBy
        ? null
        : u.isAdmin
          ? self
            ? html`<a href="${base}/admin" class="button small">${forRow('Remove admin', u.email)}</a>`
            : rowAction(`${base}/admin`, d.csrfToken, 'Remove admin', u.email, { admin: 'off' })
          : rowAction(`${base}/admin`, d.csrfToken, 'Make admin', u.email, { admin: 'on' })
    }
    ${
      self
        ? null
        : u.disabledAt === null
          ? html`<a href="${base}/disable" class="button small">${forRow('Disable', u.email)}</a>`
          : rowAction(`${base}/enable`, d.csrfToken, 'Enable', u.email)
    }
    ${u.disabledAt === null ? rowAction(`${base}/reset-link`, d.csrfToken, d.canMail ? 'Mail a reset link' : 'Reset link', u.email) : null}
    ${self ? null : html`<a href="${base}/delete" class="button danger small">${forRow('Delete…', u.email)}</a>`}
  </td>
</tr>`;
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

const secondFactors = (f: AdminUserRow['twoFactor']) =>
  f.totp || f.passkeys > 0 ? [f.totp ? 'app' : null, f.passkeys > 0 ? plural(f.passkeys, 'passkey') : null].filter(Boolean).join(', ') : html`<span class="muted">none</span>`;

function inviteRow(i: AdminInviteRow, csrfToken: string) {
  const gives = [i.admin ? 'admin' : null, i.group ? `group ${i.group}` : null].filter(Boolean).join(', ');
  return html`<tr data-invite-id="${i.id}">
  <td>${i.email}</td>
  <td data-label="Gives">${gives || html`<span class="muted">member</span>`}</td>
  <td data-label="Made by">${i.by ?? html`<span class="muted">operator</span>`}</td>
  <td data-label="Made">${formatTime(i.createdAt)}</td>
  <td data-label="Expires">${formatTime(i.expiresAt)}</td>
  <td class="actions-cell">${rowAction(`/admin/invitations/${i.id}/revoke`, csrfToken, 'Revoke', i.email)}</td>
</tr>`;
}

/** Links just made, shown this once to copy. */
const freshLinks = (links: readonly { id: string; label: string; link: string }[]) =>
  links.length === 0
    ? null
    : html`<div class="notice" role="status">
  <p><strong>Send ${links.length === 1 ? 'this link' : 'these links'} now.</strong> Each works once and will not be shown again.</p>
  ${links.map((l) => copyRow(l.id, l.link, l.label))}
</div>`;

/** Admin → Users: every account, invitations (new links shown once), and what an admin may do to each. */
export function adminUsersPage(d: AdminUsersData) {
  const resets = (d.newLinks ?? []).filter((l) => l.id.startsWith('reset-'));
  const invites = (d.newLinks ?? []).filter((l) => !l.id.startsWith('reset-'));
  const typed = d.invite;
  return layout(
    { title: 'Users', user: d.user, csrfToken: d.csrfToken, active: 'admin-users', wide: true },
    html`<section class="card">
  <h1>Users</h1>
  <p>Disabling or deleting an account signs it out everywhere at once: its web sessions end, and its API keys and connected apps stop working.</p>
  ${freshLinks(resets)}
  <div class="scroll"><table class="users rows" aria-label="Accounts">
    <thead><tr><th scope="col">E-mail</th><th scope="col">Admin</th><th scope="col">Sign-in</th><th scope="col">2FA</th><th scope="col">Last sign-in</th><th scope="col">Uploads</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${d.users.map((u) => userRow(u, d))}</tbody>
  </table></div>
  <h2 id="invite">Invite people</h2>
  ${freshLinks(invites)}
  ${typed?.done ? html`<p class="notice" role="status" id="invite-done">${typed.done}</p>` : null}
  ${typed?.error ? html`<p class="error" role="alert">${typed.error}</p>` : null}
  <form method="post" action="/admin/users/invite" class="stack" aria-labelledby="invite">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>E-mail addresses <textarea name="email" required rows="3" maxlength="${maxlengthFor(MAX_INVITES * (MAX_EMAIL_CHARS + 1))}" autocomplete="off" aria-describedby="invite-hint">${typed?.email ?? ''}</textarea>
      <span class="hint" id="invite-hint">One or more, one per line or separated by commas. Each gets a link that makes their account, once, within 7 days.</span></label>
    <label>Role <select name="role">${['member', 'admin'].map((r) => html`<option value="${r}"${(typed?.role === 'admin' ? 'admin' : 'member') === r ? html` selected` : null}>${r}</option>`)}</select></label>
    ${
      d.groups.length > 0
        ? html`<label>Group <select name="group">${[{ id: '', name: 'none' }, ...d.groups].map((g) => html`<option value="${g.id}"${(typed?.group ?? '') === g.id ? html` selected` : null}>${g.name}</option>`)}</select></label>`
        : null
    }
    ${d.canMail ? html`<label class="check"><input type="checkbox" name="send" value="on"${typed && !typed.send ? null : html` checked`}> Send the links by mail</label>` : html`<p class="hint">This server sends no mail (no --smtp-url): the links are shown here, once, for you to send.</p>`}
    <button type="submit" class="primary">Invite</button>
  </form>
  <h2>Open invitations</h2>
  ${
    d.invites.length === 0
      ? html`<p class="muted" id="no-invites">No open invitations.</p>`
      : html`<div class="scroll"><table class="invites rows" aria-label="Open invitations">
    <thead><tr><th scope="col">E-mail</th><th scope="col">Gives</th><th scope="col">Made by</th><th scope="col">Made</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${d.invites.map((i) => inviteRow(i, d.csrfToken))}</tbody>
  </table></div>`
  }
</section>`,
  );
}

export interface AdminUserDeleteData {
  user: { email: string };
  csrfToken: string;
  target: { id: string; email: string };
  /** The projects the account owns of record. */
  projects: { name: string; documentCount: number }[];
  /** How many of them a delete hands over (they hold documents, in their trash too, or members): an heir is needed. */
  handOver: number;
  /** The address typed last time, kept after a refusal. */
  transferTo?: string;
  error?: string;
}

/** Deleting an account asks first: what it owns and who should get it. */
export function adminUserDeletePage(d: AdminUserDeleteData) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'admin-users',
    title: `Delete ${d.target.email}?`,
    body: html`<p>The account is signed out everywhere and can no longer sign in; its API keys and connected apps stop working. What it
    uploaded into other people's projects stays there. This can't be undone.</p>
    ${
      d.projects.length === 0
        ? html`<p>It owns no projects.</p>`
        : html`<p>It owns ${plural(d.projects.length, 'project')}:</p>
    <ul class="owned">${d.projects.map((p) => html`<li>${p.name} <span class="muted">(${plural(p.documentCount, 'document')})</span></li>`)}</ul>
    <p>${d.handOver > 0 ? 'Name the account that gets them: they become its projects, documents and all.' : 'They are empty: without an account to hand them to, they are deleted with it.'}</p>`
    }`,
    error: d.error,
    inputs: html`<label>Hand its projects to (e-mail) <input type="email" name="transfer_to" maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}" value="${d.transferTo ?? ''}" autocomplete="off"${
      d.handOver > 0 ? html` required` : null
    }></label>`,
    action: `/admin/users/${d.target.id}/delete`,
    confirm: 'Delete account',
    cancel: '/admin/users',
  });
}

/**
 * Disabling asks first: it revokes the account's API keys and connected apps for good (enabling it again does not
 * bring them back), which one click on the wrong row did with nothing said before.
 */
export function adminUserDisablePage(d: { user: { email: string }; csrfToken: string; target: { id: string; email: string } }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'admin-users',
    title: `Disable ${d.target.email}?`,
    body: html`<p id="disable-effect">They are signed out everywhere at once and can no longer sign in: their web sessions end, and their API keys
    and connected apps are revoked for good. Enabling the account again lets them sign in, but does not bring those back. Their projects,
    documents and shares stay as they are.</p>`,
    action: `/admin/users/${d.target.id}/disable`,
    confirm: 'Disable account',
    cancel: '/admin/users',
  });
}

/** Giving up one's own admin rights asks first: the admin pages close behind them, and only another admin reopens them. */
export function adminSelfUnadminPage(d: { user: { email: string }; csrfToken: string; target: { id: string } }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'admin-users',
    title: 'Give up your admin rights?',
    body: html`<p id="unadmin-effect">You will no longer manage accounts, groups, the sharing policy or mail, nor read the audit log; only
    another admin can make you one again. Your projects, documents and shares stay as they are.</p>`,
    action: `/admin/users/${d.target.id}/admin`,
    fields: { admin: 'off' },
    confirm: 'Remove my admin rights',
    cancel: '/admin/users',
  });
}
