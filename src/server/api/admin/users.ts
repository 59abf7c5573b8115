import { z } from 'zod';
import type { Ended, Issued } from '../../../access/team-admin.js';
import { toIso } from '../../../core/clock.js';
import type { AccountOverview } from '../../../store/sql/account-overview.js';
import type { User } from '../../../store/sql/users.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Timestamp } from '../schemas.js';
import { accountNamed, ADMIN_REFUSALS, requireAdminCaller } from './guard.js';
import { MAX_EMAIL_CHARS } from '../../../core/name-limits.js';

export const UsageSchema = z.object({ documents: z.number().int(), bytes: z.number().int(), chunks: z.number().int() }).meta({ id: 'Usage' });

export const AdminUser = z
  .object({
    id: z.string(),
    email: z.string(),
    admin: z.boolean(),
    disabled: z.boolean(),
    disabled_at: Timestamp.nullable(),
    created_at: Timestamp,
    last_sign_in_at: Timestamp.nullable().describe('the last sign-in of any kind (web, CLI, an application’s consent); null: none recorded'),
    kind: z.enum(['local', 'provider']).describe('provider: linked at an identity provider (docs/sso.md); local: a password account of this server only'),
    providers: z.array(z.string()).describe('the identity providers the account is linked at'),
    two_factor: z.object({ totp: z.boolean(), passkeys: z.number().int() }).describe('an authenticator app set up, and how many passkeys'),
    usage: UsageSchema.describe('what the documents it uploaded hold (live ones: not replaced, not in the Trash)'),
    quota: z
      .object({ limit_bytes: z.number().int().nullable().describe('null: no quota'), own: z.boolean().describe('false: the default (--quota-default) applies') })
      .describe('the most its live uploads may hold (docs/operations.md#quotas)'),
  })
  .meta({ id: 'AdminUser' });

const NO_OVERVIEW: Omit<AccountOverview, 'userId'> = { lastSignInAt: null, providers: [], totp: false, passkeys: 0, usage: { documents: 0, bytes: 0, chunks: 0 } };

export function adminUserToWire(s: Services, u: User, o: Omit<AccountOverview, 'userId'> = NO_OVERVIEW, ownQuota: number | null = null): z.infer<typeof AdminUser> {
  return {
    id: u.id,
    email: u.email,
    admin: u.isAdmin,
    disabled: u.disabledAt !== null,
    disabled_at: u.disabledAt === null ? null : toIso(u.disabledAt),
    created_at: toIso(u.createdAt),
    last_sign_in_at: o.lastSignInAt === null ? null : toIso(o.lastSignInAt),
    kind: o.providers.length > 0 ? 'provider' : 'local',
    providers: o.providers,
    two_factor: { totp: o.totp, passkeys: o.passkeys },
    usage: o.usage,
    quota: { limit_bytes: s.quotas.userQuota(ownQuota), own: ownQuota !== null },
  };
}

const Ref = z.strictObject({ user: z.string().min(1).max(MAX_EMAIL_CHARS).describe('the account: its id (usr_…) or its e-mail') });

const EndedSchema = z.object({ sessions_ended: z.number().int(), keys_revoked: z.number().int(), grants_revoked: z.number().int() });
const endedToWire = (e: Ended) => ({ sessions_ended: e.sessions, keys_revoked: e.keys, grants_revoked: e.grants });

export const IssuedLink = z
  .object({
    link: z.string().nullable().describe('the one-time link, shown this once; null when it went out by mail'),
    mailed: z.boolean().describe('whether it was queued for mail (the server has --smtp-url and `send` was not false)'),
    expires_at: Timestamp,
  })
  .meta({ id: 'IssuedLink' });

export const issuedToWire = (s: Services, path: string, i: Issued) => ({ link: i.mailed ? null : `${s.publicUrl()}${path}?token=${i.token}`, mailed: i.mailed, expires_at: toIso(i.expiresAt) });

async function oneUser(s: Services, user: User) {
  const [overview, quotas] = await Promise.all([s.teamAdmin.overview([user]), s.teamAdmin.userQuotas([user])]);
  return adminUserToWire(s, user, overview.get(user.id), quotas.get(user.id) ?? null);
}

export const adminListUsers = (s: Services) =>
  defineRoute({
    name: 'admin.users.list',
    method: 'GET',
    path: '/admin/users',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'Every account, with its last sign-in, whether it is local or linked at an identity provider, its second factors and what its uploads hold. Admins only.',
    responses: { 200: { description: 'The accounts, oldest first', schema: z.object({ users: z.array(AdminUser) }) }, ...ADMIN_REFUSALS },
    async handler({ principal }) {
      await requireAdminCaller(s, principal);
      const users = await s.teamAdmin.listUsers();
      const [overview, quotas] = await Promise.all([s.teamAdmin.overview(users), s.teamAdmin.userQuotas(users)]);
      return { status: 200, body: { users: users.map((u) => adminUserToWire(s, u, overview.get(u.id), quotas.get(u.id) ?? null)) } };
    },
  });

export const adminGetUser = (s: Services) =>
  defineRoute({
    name: 'admin.users.get',
    method: 'GET',
    path: '/admin/users/:user',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'One account, as the list shows it. Admins only.',
    params: Ref,
    responses: { 200: { description: 'The account', schema: AdminUser }, ...ADMIN_REFUSALS, 404: { description: 'No such account', schema: ErrorBody } },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      return { status: 200, body: await oneUser(s, await accountNamed(s, params.user)) };
    },
  });

export const adminUpdateUser = (s: Services) =>
  defineRoute({
    name: 'admin.users.update',
    method: 'PATCH',
    path: '/admin/users/:user',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Make an account an admin or not (`admin`); give it a quota of its own (`quota_bytes`; null: the default). The last active admin stays one. Admins only.',
    params: Ref,
    body: z.strictObject({
      admin: z.boolean().optional(),
      quota_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional().describe('the most its live uploads may hold, in bytes; null: --quota-default'),
    }),
    responses: {
      200: { description: 'The account, changed', schema: AdminUser },
      400: { description: 'Invalid body', schema: ErrorBody },
      ...ADMIN_REFUSALS,
      404: { description: 'No such account', schema: ErrorBody },
      409: { description: 'It is the only active admin, or the identity provider manages it', schema: ErrorBody },
    },
    async handler({ principal, params, body }) {
      await requireAdminCaller(s, principal);
      const user = await accountNamed(s, params.user);
      if (body.admin !== undefined && body.admin !== user.isAdmin) await s.teamAdmin.setAdmin(user, body.admin);
      if (body.quota_bytes !== undefined) await s.teamAdmin.setUserQuota(user, body.quota_bytes);
      return { status: 200, body: await oneUser(s, await s.teamAdmin.userById(user.id)) };
    },
  });

export const adminDisableUser = (s: Services) =>
  defineRoute({
    name: 'admin.users.disable',
    method: 'POST',
    path: '/admin/users/:user/disable',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Disable an account: it signs in to nothing, and its web sessions, API keys and connected apps end at once, on every replica. Admins only; not their own account.',
    params: Ref,
    responses: {
      200: { description: 'Disabled, and what that ended', schema: z.object({ user: AdminUser }).extend(EndedSchema.shape) },
      ...ADMIN_REFUSALS,
      400: { description: 'The admin’s own account', schema: ErrorBody },
      404: { description: 'No such account', schema: ErrorBody },
      409: { description: 'It is the only active admin', schema: ErrorBody },
    },
    async handler({ principal, params }) {
      const admin = await requireAdminCaller(s, principal);
      const user = await accountNamed(s, params.user);
      s.teamAdmin.notOnYourself(admin, user, 'disable');
      const ended = await s.teamAdmin.disable(user);
      return { status: 200, body: { user: await oneUser(s, await s.teamAdmin.userById(user.id)), ...endedToWire(ended) } };
    },
  });

export const adminEnableUser = (s: Services) =>
  defineRoute({
    name: 'admin.users.enable',
    method: 'POST',
    path: '/admin/users/:user/enable',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Enable a disabled account: it can sign in again (what disabling ended stays ended). Admins only.',
    params: Ref,
    responses: { 200: { description: 'Enabled', schema: z.object({ user: AdminUser }) }, ...ADMIN_REFUSALS, 404: { description: 'No such account', schema: ErrorBody } },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      const user = await accountNamed(s, params.user);
      await s.teamAdmin.enable(user);
      return { status: 200, body: { user: await oneUser(s, await s.teamAdmin.userById(user.id)) } };
    },
  });

export const adminDeleteUser = (s: Services) =>
  defineRoute({
    name: 'admin.users.delete',
    method: 'DELETE',
    path: '/admin/users/:user',
    scope: 'write:documents',
    tag: 'admin',
    summary:
      "Delete an account, signing it out everywhere. Its projects that hold anything go to `transfer_to`; without it the delete is refused while there are such projects (409, naming them). What it uploaded into other people's projects stays. Admins only; not their own account.",
    params: Ref,
    query: z.strictObject({ transfer_to: z.string().min(1).max(MAX_EMAIL_CHARS).optional().describe('the account (id or e-mail) that gets its projects') }),
    responses: {
      200: { description: 'Deleted', schema: z.object({ transferred: z.number().int(), removed: z.number().int() }).extend(EndedSchema.shape) },
      ...ADMIN_REFUSALS,
      400: { description: 'The admin’s own account, or transferring to itself', schema: ErrorBody },
      404: { description: 'No such account', schema: ErrorBody },
      409: { description: 'Projects to hand on and no transfer_to, a disabled transfer_to, or the only active admin', schema: ErrorBody },
    },
    async handler({ principal, params, query }) {
      const admin = await requireAdminCaller(s, principal);
      const user = await accountNamed(s, params.user);
      s.teamAdmin.notOnYourself(admin, user, 'delete');
      const to = query.transfer_to ? await accountNamed(s, query.transfer_to) : undefined;
      const done = await s.teamAdmin.delete(user, to);
      return { status: 200, body: { transferred: done.transferred, removed: done.removed, ...endedToWire(done) } };
    },
  });

export const adminResetLink = (s: Services) =>
  defineRoute({
    name: 'admin.users.reset_link',
    method: 'POST',
    path: '/admin/users/:user/reset-link',
    scope: 'write:documents',
    tag: 'admin',
    summary:
      'Make a one-time link that sets a new password for the account (valid 24 hours; using it signs the account out everywhere). With a mail server (`--smtp-url`) it is mailed to the account unless `send` is false; otherwise it is answered, once, for the admin to hand over. Admins only.',
    params: Ref,
    body: z.strictObject({ send: z.boolean().default(true).describe('mail it to the account when the server can send mail') }).default({ send: true }),
    responses: {
      201: { description: 'The link (or that it was mailed)', schema: IssuedLink },
      ...ADMIN_REFUSALS,
      404: { description: 'No such account', schema: ErrorBody },
      409: { description: 'The account is disabled', schema: ErrorBody },
    },
    async handler({ principal, params, body }) {
      const admin = await requireAdminCaller(s, principal);
      const user = await accountNamed(s, params.user);
      const issued = await s.teamAdmin.resetLink(user, admin, { send: body.send });
      return { status: 201, body: issuedToWire(s, '/reset-password', issued) };
    },
  });
