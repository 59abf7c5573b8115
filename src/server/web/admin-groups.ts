import type Router from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { sentence } from '../../web/format.js';
import type { Group } from '../../store/sql/groups.js';
import { type AdminGroupData, adminGroupDeletePage, adminGroupPage, adminGroupsPage } from '../../web/pages/admin-groups.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin, requireAdminForm } from './admin-common.js';
import { answerAsPage } from './answer-as-page.js';
import { flash, redirectWithOutcome } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import type { WebContext, WebUser } from './session.js';

async function showGroups(ctx: WebContext, s: Services, admin: WebUser, extra: { error?: string; form?: { name: string; description: string } } = {}, status = 200) {
  render(ctx, adminGroupsPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, groups: await s.teamAdmin.listGroups(), ...extra }), status);
}

/** One group's page: its members, and the projects shared with it (linked where this admin may open their Sharing tab). */
async function showGroup(ctx: WebContext, s: Services, admin: WebUser, group: Group, extra: Pick<AdminGroupData, 'error' | 'email' | 'noAccount'> = {}, status = 200) {
  const [members, shared, roles] = await Promise.all([s.teamAdmin.members(group), s.teamAdmin.groupProjects(group), s.access.roles(admin.actor)]);
  const projects = shared.map((p) => ({ id: p.projectId, name: p.name, role: p.role, ownerEmail: p.ownerEmail, manage: roles.get(p.projectId) === 'owner' }));
  render(ctx, adminGroupPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, group, members, projects, ...extra }), status);
}

/** Admin → Groups: make and delete groups, add and remove their members (an identity provider's are read-only). */
export function adminGroupRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin.groups', '/admin/groups', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (admin) await showGroups(ctx, s, admin);
  });

  router.post('admin.groups.create', '/admin/groups', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const form = { name: formField(ctx, 'name'), description: formField(ctx, 'description') };
    try {
      const group = await s.teamAdmin.createGroup(form.name, form.description);
      s.log.info({ admin: admin.id, group: group.id }, 'group created on Admin → Groups');
      // Said as every other change here is, with what comes next.
      flash(ctx, `Made the group ${group.name}. Add its members here, then share projects with group:${group.name} on a project's Sharing tab.`);
      ctx.status = 303;
      ctx.redirect(`/admin/groups/${group.id}`);
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      answerAsPage(ctx, '/admin/groups');
      await showGroups(ctx, s, admin, { error: sentence(err.message), form }, err.status);
    }
  });

  router.get('admin.group', '/admin/groups/:id', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    await showGroup(ctx, s, admin, await s.teamAdmin.groupById(ctx.params.id!));
  });

  router.post('admin.group.delete', '/admin/groups/:id/delete', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const group = await s.teamAdmin.groupById(ctx.params.id!);
    // The group page's button asks first, naming what goes; the confirmation posts `confirm=yes`.
    if (formField(ctx, 'confirm') !== 'yes' && group.source === 'local') {
      render(ctx, adminGroupDeletePage({ user: admin, csrfToken: ctx.state.session!.csrfToken, group, reach: await s.teamAdmin.groupReach(group) }));
      return;
    }
    await redirectWithOutcome(ctx, '/admin/groups', async () => {
      await s.teamAdmin.deleteGroup(group);
      s.log.info({ admin: admin.id, group: group.id }, 'group deleted on Admin → Groups');
      return `Deleted the group ${group.name}: its members lost what was shared with it.`;
    });
  });

  router.post('admin.group.members.add', '/admin/groups/:id/members', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const group = await s.teamAdmin.groupById(ctx.params.id!);
    const email = formField(ctx, 'email');
    await redirectWithOutcome(
      ctx,
      `/admin/groups/${group.id}`,
      async () => {
        const user = await s.teamAdmin.user(email);
        const added = await s.teamAdmin.addToGroup(group, user);
        return added ? `Added ${user.email} to ${group.name}.` : `${user.email} was in ${group.name} already.`;
      },
      // Not found is the address (the group was found above): offered an invitation into the group instead.
      async (error, status) => showGroup(ctx, s, admin, group, { error, email, noAccount: status === 404 }, status),
    );
  });

  router.post('admin.group.members.remove', '/admin/groups/:id/members/:user_id/remove', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const group = await s.teamAdmin.groupById(ctx.params.id!);
    await redirectWithOutcome(ctx, `/admin/groups/${group.id}`, async () => {
      const user = await s.teamAdmin.userById(ctx.params.user_id!);
      const removed = await s.teamAdmin.removeFromGroup(group, user);
      return removed ? `Removed ${user.email} from ${group.name}: they lost what was shared with it.` : `${user.email} was not in ${group.name}.`;
    });
  });
}
