import { formatTime, plural } from '../format.js';
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
}

export interface AdminUsersData {
  user: { id: string; email: string };
  csrfToken: string;
  users: AdminUserRow[];
  invites: { email: string; createdAt: number; expiresAt: number }[];
  /** The invitation just made: its link is shown this once. */
  newInvite?: { email: string; link: string };
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
  <td data-label="Status">${u.disabledAt === null ? 'active' : html`<strong class="error">disabled</strong> <span class="muted">since ${formatTime(u.disabledAt)}</span>`}</td>
  <td data-label="Created">${formatTime(u.createdAt)}</td>
  <td class="actions-cell">
    ${
      u.adminManagedBy
        ? null
        : u.isAdmin
          ? rowAction(`${base}/admin`, d.csrfToken, 'Remove admin', u.email, { admin: 'off' })
          : rowAction(`${base}/admin`, d.csrfToken, 'Make admin', u.email, { admin: 'on' })
    }
    ${self ? null : u.disabledAt === null ? rowAction(`${base}/disable`, d.csrfToken, 'Disable', u.email) : rowAction(`${base}/enable`, d.csrfToken, 'Enable', u.email)}
    ${self ? null : html`<a href="${base}/delete" class="button danger small">${forRow('Delete…', u.email)}</a>`}
  </td>
</tr>`;
}

/** Admin → Users: every account, invitations (the new link shown once), and what an admin may do to each. */
export function adminUsersPage(d: AdminUsersData) {
  const fresh = d.newInvite
    ? html`<div class="notice" role="status">
  <p><strong>Send this link to ${d.newInvite.email} now.</strong> It works once, for 7 days, and will not be shown again.</p>
  ${copyRow('invite-link', d.newInvite.link, 'Invitation link')}
</div>`
    : null;
  return layout(
    { title: 'Users', user: d.user, csrfToken: d.csrfToken, active: 'admin-users', wide: true },
    html`<section class="card">
  <h1>Users</h1>
  <p>Disabling or deleting an account signs it out everywhere at once: its web sessions end, and its API keys and connected apps stop working.</p>
  <div class="scroll"><table class="users rows" aria-label="Accounts">
    <thead><tr><th scope="col">E-mail</th><th scope="col">Admin</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${d.users.map((u) => userRow(u, d))}</tbody>
  </table></div>
  <h2 id="invite">Invite someone</h2>
  ${fresh}
  <form method="post" action="/admin/users/invite" class="stack" aria-labelledby="invite">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>E-mail <input type="email" name="email" required maxlength="254" autocomplete="off"></label>
    <button type="submit" class="primary">Make an invitation link</button>
  </form>
  <h2>Open invitations</h2>
  ${
    d.invites.length === 0
      ? html`<p class="muted" id="no-invites">No open invitations.</p>`
      : html`<ul class="invites">${d.invites.map((i) => html`<li>${i.email} <span class="muted">· made ${formatTime(i.createdAt)}, works until ${formatTime(i.expiresAt)}</span></li>`)}</ul>`
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
  /** The address typed last time, kept after a refusal. */
  transferTo?: string;
  error?: string;
}

/** Deleting an account asks first: what it owns and who should get it. */
export function adminUserDeletePage(d: AdminUserDeleteData) {
  const holding = d.projects.filter((p) => p.documentCount > 0);
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
    <p>${holding.length > 0 ? 'Name the account that gets them: they become its projects, documents and all.' : 'They are empty: without an account to hand them to, they are deleted with it.'}</p>`
    }`,
    error: d.error,
    inputs: html`<label>Hand its projects to (e-mail) <input type="email" name="transfer_to" maxlength="254" value="${d.transferTo ?? ''}" autocomplete="off"${
      holding.length > 0 ? html` required` : null
    }></label>`,
    action: `/admin/users/${d.target.id}/delete`,
    confirm: 'Delete account',
    cancel: '/admin/users',
  });
}
