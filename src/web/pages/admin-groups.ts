import { maxlengthFor } from '../../core/code-points.js';
import { MAX_DESCRIPTION_CHARS, MAX_EMAIL_CHARS, MAX_NAME_CHARS } from '../../core/name-limits.js';
import { plural } from '../format.js';
import { html } from '../html.js';
import { groupDeletionConsequence, type GroupReach } from '../../core/group-reach.js';
import { confirmPage } from './confirm.js';
import { crumbs, layout } from './layout.js';

export interface AdminGroupRow {
  id: string;
  name: string;
  description: string;
  /** 'local' (changed here) or the identity provider it comes from (read-only here). */
  source: string;
  memberCount: number;
}

const LOCAL = 'local';

/** "from <provider>": a group an identity provider owns, whose members are changed there. */
const fromProvider = (g: AdminGroupRow) => (g.source === LOCAL ? null : html` <span class="badge source">from ${g.source}</span>`);

export interface AdminGroupsData {
  user: { email: string };
  csrfToken: string;
  groups: AdminGroupRow[];
  error?: string;
  /** Form values kept after a refusal. */
  form?: { name: string; description: string };
}

/** Admin → Groups: every group with its size, and a form for a new one. */
export function adminGroupsPage(d: AdminGroupsData) {
  const rows = d.groups.map(
    (g) => html`<tr data-group-id="${g.id}">
  <td><a href="/admin/groups/${g.id}" class="group-name">${g.name}</a>${fromProvider(g)}${g.description ? html`<br><span class="muted">${g.description}</span>` : null}</td>
  <td class="num" data-label="Members">${g.memberCount}</td>
</tr>`,
  );
  return layout(
    { title: 'Groups', user: d.user, csrfToken: d.csrfToken, active: 'admin-groups', wide: true },
    html`<section class="card">
  <h1>Groups</h1>
  <p>Share a project with a group (<code>group:name</code> in its Share section) and everyone in it gets that role; whoever leaves the group loses it at once.</p>
  ${
    d.groups.length === 0
      ? html`<p class="muted" id="no-groups">No groups yet.</p>`
      : html`<div class="scroll"><table class="groups rows" aria-label="Groups">
    <thead><tr><th scope="col">Group</th><th scope="col" class="num">Members</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`
  }
  <h2 id="new-group">New group</h2>
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="/admin/groups" class="stack" aria-labelledby="new-group">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <label>Name <input type="text" name="name" required maxlength="${maxlengthFor(MAX_NAME_CHARS)}" value="${d.form?.name ?? ''}"></label>
    <label>Description <textarea name="description" rows="2" maxlength="${maxlengthFor(MAX_DESCRIPTION_CHARS)}">${d.form?.description ?? ''}</textarea></label>
    <button type="submit" class="primary">Create group</button>
  </form>
</section>`,
  );
}

export interface AdminGroupData {
  user: { email: string };
  csrfToken: string;
  group: AdminGroupRow;
  members: { id: string; email: string }[];
  /** Why Add a person was refused, and the address as it was typed. */
  error?: string;
  email?: string;
  /** The address typed has no account: offered an invitation into this group instead. */
  noAccount?: boolean;
  /** The projects shared with the group, by name; `manage`: the admin owns it, so its Sharing tab opens for them. */
  projects: { id: string; name: string; role: string; ownerEmail: string | null; manage: boolean }[];
}

/**
 * What the group was given: each project, its role, its owner of record. An admin reads no project they are no
 * member of (docs/permissions.md), so the Sharing tab is linked only where they own the project; elsewhere its owner
 * is the one to ask.
 */
function groupProjects(g: AdminGroupRow, projects: AdminGroupData['projects']) {
  if (projects.length === 0) {
    return html`<p class="muted" id="no-projects">No project is shared with ${g.name} yet: a project's owner shares it on the project's Sharing tab, as <code>group:${g.name}</code> with a role.</p>`;
  }
  const rows = projects.map(
    (p) => html`<tr data-project-id="${p.id}">
  <td>${p.manage ? html`<a href="/projects/${p.id}/sharing">${p.name}</a>` : p.name}</td>
  <td data-label="Role">${p.role}</td>
  <td data-label="Owner">${p.ownerEmail ?? html`<span class="muted">none</span>`}</td>
</tr>`,
  );
  return html`<p class="muted" id="project-count">${plural(projects.length, 'project')}: a project's owners change what it gives on its Sharing tab.</p>
  <div class="scroll"><table class="projects rows" aria-labelledby="shared-projects">
    <thead><tr><th scope="col">Project</th><th scope="col">Role</th><th scope="col">Owner</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

/** One group: its members, and (for a local group) the forms that add, remove and delete. */
export function adminGroupPage(d: AdminGroupData) {
  const g = d.group;
  const local = g.source === LOCAL;
  const csrf = html`<input type="hidden" name="_csrf" value="${d.csrfToken}">`;
  const rows = d.members.map(
    (m) => html`<tr data-user-id="${m.id}">
  <td>${m.email}</td>
  <td>${
    local
      ? html`<form method="post" action="/admin/groups/${g.id}/members/${m.id}/remove" class="inline">${csrf}<button type="submit" class="secondary small" aria-label="Remove ${m.email} from ${g.name}">Remove</button></form>`
      : null
  }</td>
</tr>`,
  );
  return layout(
    { title: g.name, user: d.user, csrfToken: d.csrfToken, active: 'admin-groups' },
    html`<section class="card">
  ${crumbs([{ href: '/admin/groups', label: 'Groups' }])}
  <h1>${g.name}${fromProvider(g)}</h1>
  ${g.description ? html`<p>${g.description}</p>` : null}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${
    d.noAccount && d.email && local
      ? html`<p id="invite-instead"><a href="/admin/users?${new URLSearchParams({ email: d.email, group: g.id }).toString()}#invite">Invite ${d.email} into ${g.name}</a>: they join the group as they make their account.</p>`
      : null
  }
  ${local ? null : html`<p class="muted" id="read-only">This group comes from ${g.source}: its members are changed there, and it is read-only here.</p>`}
  <h2>Members</h2>
  <p class="muted" id="member-count">${
    d.members.length > 0
      ? plural(d.members.length, 'member')
      : local
        ? 'No members yet: add people below.'
        : 'No members yet.'
  }</p>
  ${
    d.members.length === 0
      ? null
      : html`<div class="scroll"><table class="members rows" aria-label="Members">
    <thead><tr><th scope="col">E-mail</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`
  }
  ${
    local
      ? html`<form method="post" action="/admin/groups/${g.id}/members" class="stack" id="add-member">${csrf}
    <label>Add a person (e-mail) <input type="email" name="email" value="${d.email}" required maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}" autocomplete="off"></label>
    <button type="submit" class="primary">Add to group</button>
  </form>`
      : null
  }
  <h2 id="shared-projects">Shared with this group</h2>
  ${groupProjects(g, d.projects)}
  ${
    local
      ? html`<h2>Delete this group</h2>
  <p class="muted">Its members lose what was shared with the group; what was shared with them directly stays.</p>
  <form method="post" action="/admin/groups/${g.id}/delete">${csrf}<button type="submit" class="danger">Delete group</button></form>`
      : null
  }
</section>`,
  );
}

/** Asked before a group is deleted: what its members lose, and how many projects were shared with it. */
export function adminGroupDeletePage(d: { user: { email: string }; csrfToken: string; group: AdminGroupRow; reach: GroupReach }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'admin-groups',
    title: `Delete the group ${d.group.name}?`,
    body: html`<p id="group-reach">${groupDeletionConsequence(d.reach)} This can't be undone.</p>`,
    fields: { confirm: 'yes' },
    action: `/admin/groups/${d.group.id}/delete`,
    confirm: 'Delete group',
    cancel: `/admin/groups/${d.group.id}`,
  });
}
