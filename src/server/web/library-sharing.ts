import type Router from '@koa/router';
import { isRole } from '../../access/roles.js';
import { invalidRequest } from '../../core/errors.js';
import type { SharingTyped } from '../../web/pages/project.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { redirectWithOutcome } from './flash.js';
import { formBody, formField } from './form.js';
import { renderNotFound } from './library-common.js';
import { showProject } from './library-projects.js';
import type { WebContext, WebUser } from './session.js';

/** "group:Team" names a group; anything else an e-mail address. */
const shareTarget = (member: string) => (/^group:/i.test(member) ? { group: member.slice('group:'.length).trim() } : { email: member.trim() });

/**
 * Runs a sharing change for the project's Sharing tab, and goes back there with what happened. A project the
 * user may not read is the not-found page, a role short the "not allowed" page; what the form got wrong (an unknown
 * address, the owner of record) is said on the project page, with the `typed` form as it was sent.
 */
async function change(ctx: WebContext, s: Services, user: WebUser, projectId: string, work: () => Promise<string>, typed?: SharingTyped): Promise<void> {
  if (!(await s.access.roleOn(user.actor, projectId))) return renderNotFound(ctx, user, 'project');
  await redirectWithOutcome(ctx, `/projects/${projectId}/sharing`, work, typed && ((error, status) => showProject(ctx, s, user, projectId, { error, tab: 'sharing', sharing: typed }, status)));
}

/** The Share section's forms: share or change a role, stop sharing, hand the project to another owner of record. */
export function sharingRoutes(router: Router<AppState>, s: Services): void {
  router.post('project.members.add', '/projects/:id/members', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const member = formField(ctx, 'member');
    const role = formField(ctx, 'role');
    await change(ctx, s, user, ctx.params.id!, async () => {
      if (!isRole(role)) throw invalidRequest('choose a role: viewer, editor or owner');
      const { member: m, created } = await s.sharing.share(user.actor, ctx.params.id!, shareTarget(member), role);
      if (created) return `Shared with ${m.email ?? `the group ${m.group}`} as ${role}.`;
      return `${m.email ?? `The group ${m.group}`} is now ${role === 'viewer' ? 'a' : 'an'} ${role}.`;
    }, { member, role });
  });

  router.post('project.members.remove', '/projects/:id/members/:member_id/remove', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const projectId = ctx.params.id!;
    let left = false;
    await change(ctx, s, user, projectId, async () => {
      await s.sharing.unshare(user.actor, projectId, ctx.params.member_id!);
      // A copy of the actor: access decisions are kept per actor for the request, and this one changed.
      if (ctx.params.member_id !== user.actor.userId || (await s.access.roleOn({ ...user.actor }, projectId))) return 'No longer shared with them: what they uploaded stays.';
      left = true;
      return 'You left the project: what you uploaded in it stays.';
    });
    // Who removed themselves reads the project no more: its Sharing tab would be "no such project".
    if (left) ctx.redirect('/projects');
  });

  router.post('project.transfer', '/projects/:id/transfer', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const email = formField(ctx, 'email');
    await change(ctx, s, user, ctx.params.id!, async () => {
      const project = await s.sharing.transfer(user.actor, ctx.params.id!, email);
      return `“${project.name}” now belongs to ${email.trim()}; you stay an owner until you remove yourself.`;
    }, { email });
  });
}
