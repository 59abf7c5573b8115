import type Router from '@koa/router';
import { endedSummary, type InviteOutcome } from '../../access/team-admin.js';
import { LOCAL_GROUPS } from '../../store/sql/groups.js';
import { invalidRequest, isAppError } from '../../core/errors.js';
import { cutChars } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';
import { lowerKey } from '../../core/name-spellings.js';
import { formatTime, plural, sentence } from '../../web/format.js';
import { type AdminUsersData, adminSelfUnadminPage, adminUserDeletePage, adminUserDisablePage, adminUsersPage, type InviteTyped } from '../../web/pages/admin-users.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin, requireAdminForm } from './admin-common.js';
import { answerAsPage } from './answer-as-page.js';
import { flash, redirectWithOutcome, refused } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { redirectWithOnce, takeOnce, type WebContext, type WebUser } from './session.js';

/**
 * The invitation form's addresses: one per line, or separated by commas or semicolons (not spaces: "not an address"
 * is refused whole). A comma typed for a dot ("ann@example,com") is kept inside its address, refused whole: split
 * there, it invited "ann@example", a real-looking address nobody reads.
 */
function splitAddresses(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/[\r\n;]+/)) {
    let prev: string | null = null; // the last address of this line, as typed
    for (const piece of line.split(',')) {
      if (prev !== null && /@[^.@\s]+$/.test(prev) && /^[^@\s]+$/.test(piece)) {
        prev = `${prev},${piece}`;
        out[out.length - 1] = prev.trim();
      } else {
        prev = piece;
        out.push(piece.trim());
      }
    }
  }
  return out.filter(Boolean);
}

/** An admin's own account is kept from what would lock them out: disabling or deleting it is for another admin. */
function notOnYourself(admin: WebUser, targetId: string, what: string): void {
  if (admin.id === targetId) throw invalidRequest(`you cannot ${what} your own account: another admin can`);
}

async function showDeleteConfirm(ctx: WebContext, s: Services, admin: WebUser, targetId: string, extra: { transferTo?: string; error?: string } = {}, status = 200) {
  const target = await s.teamAdmin.userById(targetId);
  const projects = await s.teamAdmin.ownedProjects(target);
  const handOver = (await s.teamAdmin.holding(projects)).length;
  render(ctx, adminUserDeletePage({ user: admin, csrfToken: ctx.state.session!.csrfToken, target, projects, handOver, ...extra }), status);
}

async function showUsers(ctx: WebContext, s: Services, admin: WebUser, extra: Pick<AdminUsersData, 'newLinks' | 'invite'>, status = 200) {
  const [users, invites, groups] = await Promise.all([s.teamAdmin.listUsers(), s.teamAdmin.openInvites(), s.teamAdmin.listGroups()]);
  const [overview, quotas] = await Promise.all([s.teamAdmin.overview(users), s.teamAdmin.userQuotas(users)]);
  const groupNames = new Map(groups.map((g) => [g.id, g.name]));
  render(
    ctx,
    adminUsersPage({
      user: admin,
      csrfToken: ctx.state.session!.csrfToken,
      users: users.map((u) => {
        const o = overview.get(u.id);
        return { ...u, lastSignInAt: o?.lastSignInAt ?? null, providers: o?.providers ?? [], twoFactor: { totp: o?.totp ?? false, passkeys: o?.passkeys ?? 0 }, usage: o?.usage ?? { documents: 0, bytes: 0 }, quotaBytes: s.quotas.userQuota(quotas.get(u.id) ?? null) };
      }),
      invites: invites.map((i) => ({ ...i, group: i.groupId === null ? null : (groupNames.get(i.groupId) ?? null), by: i.createdBy?.email ?? null })),
      groups: groups.filter((g) => g.source === LOCAL_GROUPS).map((g) => ({ id: g.id, name: g.name })),
      canMail: s.mailer.enabled,
      ...extra,
    }),
    status,
  );
}

/** Admin → Users: the accounts, invitations, disable and enable, admin or not, delete (handing projects on). */
export function adminUserRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin', '/admin', async (ctx) => {
    if (await requireAdmin(ctx, s)) ctx.redirect('/admin/users');
  });

  router.get('admin.users', '/admin/users', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    const fresh = await takeOnce(ctx, s, 'links');
    // A group page's "Invite … into <group>" fills the form in (the admin still sends it).
    const asked = typeof ctx.query.email === 'string' ? cutChars(ctx.query.email.trim(), MAX_EMAIL_CHARS) : '';
    const invite: InviteTyped | undefined = asked ? { error: '', email: asked, role: 'member', group: typeof ctx.query.group === 'string' ? ctx.query.group : '', send: true } : undefined;
    await showUsers(ctx, s, admin, { ...(fresh ? { newLinks: fresh.links } : {}), ...(invite ? { invite } : {}) });
  });

  router.post('admin.users.invite', '/admin/users/invite', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const emails = splitAddresses(formField(ctx, 'email'));
    const send = formField(ctx, 'send') === 'on';
    // A refusal is the page again with the form as sent (a redirect emptied it), less the addresses that were invited.
    const typed = (error: string, email: string): InviteTyped => ({ error, email, role: formField(ctx, 'role'), group: formField(ctx, 'group'), send });
    let outcomes: InviteOutcome[];
    // A new invitation for an address replaces its open one, whose link stops working: said, so the admin knows the
    // earlier mail or link is dead.
    let replaced: Map<string, number>;
    try {
      const groupId = formField(ctx, 'group');
      const group = groupId ? await s.teamAdmin.groupById(groupId) : null;
      replaced = new Map((await s.teamAdmin.openInvites()).map((i) => [lowerKey(i.email), i.createdAt]));
      outcomes = await s.teamAdmin.inviteMany(emails, admin, { admin: formField(ctx, 'role') === 'admin', group, send });
    } catch (err) {
      const refusal = refused(err);
      answerAsPage(ctx, '/admin/users#invite');
      return showUsers(ctx, s, admin, { invite: typed(sentence(refusal.message), formField(ctx, 'email')) }, refusal.status);
    }
    const made = outcomes.flatMap((o) => (o.ok ? [o] : []));
    const notInvited = outcomes.flatMap((o) => (o.ok ? [] : [o]));
    const why = notInvited.map((o) => (outcomes.length === 1 ? sentence(o.error) : `${o.email}: ${o.error}`));
    const mailed = made.filter((o) => o.issued.mailed).map((o) => o.email);
    const earlier = made.flatMap((o) => {
      const at = replaced.get(lowerKey(o.email));
      return at === undefined ? [] : [`${o.email} (made ${formatTime(at)})`];
    });
    const done = [
      mailed.length > 0 ? `Mailed an invitation to ${mailed.join(', ')}.` : null,
      earlier.length === 1 ? `The earlier invitation for ${earlier[0]} is replaced: its link no longer works.` : null,
      earlier.length > 1 ? `The earlier invitations for ${earlier.join(', ')} are replaced: their links no longer work.` : null,
    ].filter(Boolean).join(' ');
    const refusedSaid = why.length > 0 ? (outcomes.length === 1 ? why[0]! : `Not invited: ${why.join('; ')}.`) : '';
    const links = made.filter((o) => !o.issued.mailed).map((o, i) => ({ id: i === 0 ? 'invite-link' : `invite-link-${i + 1}`, label: `Invitation link for ${o.email}`, link: `${s.publicUrl()}/invite?token=${o.issued.token}` }));
    // What was done is said apart from what was refused: one red alert for both read as if nothing went out.
    if (notInvited.length > 0) {
      // The links made are on that page too: a reload re-posted the form and replaced them (mailing them again).
      answerAsPage(ctx, '/admin/users#invite');
      return showUsers(ctx, s, admin, { invite: { ...typed(refusedSaid, notInvited.map((o) => o.email).join('\n')), ...(done ? { done } : {}) }, newLinks: links }, made.length > 0 ? 200 : 400);
    }
    if (done) flash(ctx, done);
    if (links.length > 0) return redirectWithOnce(ctx, s, { kind: 'links', links }, '/admin/users#invite');
    ctx.status = 303;
    ctx.redirect('/admin/users#invite');
  });

  router.post('admin.invitations.revoke', '/admin/invitations/:id/revoke', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/users#invite', async () => `Revoked the invitation for ${await s.teamAdmin.revokeInvite(ctx.params.id!)}: its link no longer works.`);
  });

  router.post('admin.users.reset_link', '/admin/users/:id/reset-link', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    let link: { id: string; label: string; link: string } | null = null;
    await redirectWithOutcome(ctx, '/admin/users', async () => {
      const target = await s.teamAdmin.userById(ctx.params.id!);
      const issued = await s.teamAdmin.resetLink(target, admin, { send: true });
      if (issued.mailed) return `Mailed ${target.email} a link to set a new password (it works once, for 24 hours).`;
      link = { id: 'reset-link', label: `Reset link for ${target.email}`, link: `${s.publicUrl()}/reset-password?token=${issued.token}` };
      return `Made a link that sets a new password for ${target.email}: send it to them. It works once, for 24 hours, and signs them out everywhere.`;
    });
    if (link) await s.webSessions.stashOnce(ctx.state.session!, { kind: 'links', links: [link] });
  });

  router.get('admin.users.disable.confirm', '/admin/users/:id/disable', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    const target = await s.teamAdmin.userById(ctx.params.id!);
    render(ctx, adminUserDisablePage({ user: admin, csrfToken: ctx.state.session!.csrfToken, target }));
  });

  router.post('admin.users.disable', '/admin/users/:id/disable', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/users', async () => {
      notOnYourself(admin, ctx.params.id!, 'disable');
      const target = await s.teamAdmin.userById(ctx.params.id!);
      const ended = await s.teamAdmin.disable(target);
      s.log.info({ admin: admin.id, user: target.id, ...ended }, 'account disabled on Admin → Users');
      return `Disabled ${target.email}: ${endedSummary(ended)}.`;
    });
  });

  router.post('admin.users.enable', '/admin/users/:id/enable', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/users', async () => {
      const target = await s.teamAdmin.userById(ctx.params.id!);
      await s.teamAdmin.enable(target);
      s.log.info({ admin: admin.id, user: target.id }, 'account enabled on Admin → Users');
      return `Enabled ${target.email}: they can sign in again (their old keys and sessions stay ended).`;
    });
  });

  // Asked only of one's own account (another's admin rights are given and taken in one click, and given back as easily).
  router.get('admin.users.admin.confirm', '/admin/users/:id/admin', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    if (ctx.params.id !== admin.id) return ctx.redirect('/admin/users');
    render(ctx, adminSelfUnadminPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, target: admin }));
  });

  router.post('admin.users.admin', '/admin/users/:id/admin', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const value = formField(ctx, 'admin');
    // An admin who gives up their own admin cannot come back to this page: they go to the start. A refusal (the last
    // admin) leaves them where they were, with why.
    const self = ctx.params.id === admin.id && value === 'off';
    await redirectWithOutcome(ctx, { done: self ? '/' : '/admin/users', refused: '/admin/users' }, async () => {
      if (value !== 'on' && value !== 'off') throw invalidRequest('admin must be on or off');
      const target = await s.teamAdmin.userById(ctx.params.id!);
      await s.teamAdmin.setAdmin(target, value === 'on');
      s.log.info({ admin: admin.id, user: target.id, is_admin: value === 'on' }, 'admin changed on Admin → Users');
      return value === 'on' ? `${target.email} is now an admin.` : `${target.email} is no longer an admin.`;
    });
  });

  router.get('admin.users.delete.confirm', '/admin/users/:id/delete', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (admin) await showDeleteConfirm(ctx, s, admin, ctx.params.id!);
  });

  router.post('admin.users.delete', '/admin/users/:id/delete', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    const target = await s.teamAdmin.userById(ctx.params.id!);
    const transferTo = formField(ctx, 'transfer_to').trim();
    try {
      notOnYourself(admin, target.id, 'delete');
      const to = transferTo ? await s.teamAdmin.user(transferTo) : undefined;
      const done = await s.teamAdmin.delete(target, to);
      s.log.info({ admin: admin.id, user: target.id, transferred_to: to?.id, ...done }, 'account deleted on Admin → Users');
      const handed = to && done.transferred > 0 ? `; ${plural(done.transferred, 'project')} now ${done.transferred === 1 ? 'belongs' : 'belong'} to ${to.email}` : '';
      const removed = done.removed > 0 ? `; deleted ${plural(done.removed, 'empty project')}` : '';
      flash(ctx, `Deleted ${target.email}${handed}${removed}; ${endedSummary(done)}.`);
      ctx.status = 303;
      ctx.redirect('/admin/users');
    } catch (err) {
      // Refused (an unknown account to hand things to, projects with documents and nobody named): said on the page.
      if (!isAppError(err) || err.status >= 500) throw err;
      answerAsPage(ctx, `/admin/users/${target.id}/delete`);
      await showDeleteConfirm(ctx, s, admin, target.id, { transferTo, error: sentence(err.message) }, err.status);
    }
  });
}
