import { z } from 'zod';
import { toIso } from '../../../core/clock.js';
import { groupNameProblem } from '../../../access/team-admin.js';
import { notFound } from '../../../core/errors.js';
import { MAX_DESCRIPTION_CHARS, MAX_EMAIL_CHARS, MAX_NAME_CHARS } from '../../../core/name-limits.js';
import type { Group } from '../../../store/sql/groups.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Timestamp } from '../schemas.js';
import { accountNamed, ADMIN_REFUSALS, requireAdminCaller } from './guard.js';

export const AdminGroup = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    source: z.string().describe('local (managed here) or the identity provider that manages it (read-only here)'),
    member_count: z.number().int(),
    created_at: Timestamp,
  })
  .meta({ id: 'AdminGroup' });

const groupToWire = (g: Group): z.infer<typeof AdminGroup> => ({ id: g.id, name: g.name, description: g.description, source: g.source, member_count: g.memberCount, created_at: toIso(g.createdAt) });

const GroupRef = z.strictObject({ group: z.string().min(1).max(100).describe('the group: its id (grp_…) or its name') });
const groupNamed = (s: Services, ref: string): Promise<Group> => (ref.startsWith('grp_') ? s.teamAdmin.groupById(ref) : s.teamAdmin.group(ref));

const missing = { 404: { description: 'No such group (or account)', schema: ErrorBody } };
const providerManaged = { 409: { description: 'The group comes from an identity provider: change it there', schema: ErrorBody } };

export const adminListGroups = (s: Services) =>
  defineRoute({
    name: 'admin.groups.list',
    method: 'GET',
    path: '/admin/groups',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'Every group, local and from the identity provider, with its member count. Admins only.',
    responses: { 200: { description: 'The groups', schema: z.object({ groups: z.array(AdminGroup) }) }, ...ADMIN_REFUSALS },
    async handler({ principal }) {
      await requireAdminCaller(s, principal);
      return { status: 200, body: { groups: (await s.teamAdmin.listGroups()).map(groupToWire) } };
    },
  });

export const adminCreateGroup = (s: Services) =>
  defineRoute({
    name: 'admin.groups.create',
    method: 'POST',
    path: '/admin/groups',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Make a local group. Admins only.',
    body: z.strictObject({
      // The access room's rule, checked here too so its refusal names the field as every field error does (`body.name: …`).
      name: z
        .string()
        .min(1)
        .max(MAX_NAME_CHARS)
        .superRefine((name, ctx) => {
          const problem = groupNameProblem(name.trim());
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      description: z.string().max(MAX_DESCRIPTION_CHARS).default(''),
    }),
    responses: { 201: { description: 'The group', schema: AdminGroup }, 400: { description: 'Invalid name', schema: ErrorBody }, ...ADMIN_REFUSALS, 409: { description: 'A group with that name exists', schema: ErrorBody } },
    async handler({ principal, body }) {
      await requireAdminCaller(s, principal);
      return { status: 201, body: groupToWire(await s.teamAdmin.createGroup(body.name, body.description)) };
    },
  });

export const adminGetGroup = (s: Services) =>
  defineRoute({
    name: 'admin.groups.get',
    method: 'GET',
    path: '/admin/groups/:group',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'A group and its members. Admins only.',
    params: GroupRef,
    responses: { 200: { description: 'The group', schema: AdminGroup.extend({ members: z.array(z.object({ id: z.string(), email: z.string() })), project_count: z.number().int().describe('projects shared with the group: what its members lose when it is deleted') }) }, ...ADMIN_REFUSALS, ...missing },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      const group = await groupNamed(s, params.group);
      return { status: 200, body: { ...groupToWire(group), members: await s.teamAdmin.members(group), project_count: (await s.teamAdmin.groupReach(group)).projects } };
    },
  });

export const adminDeleteGroup = (s: Services) =>
  defineRoute({
    name: 'admin.groups.delete',
    method: 'DELETE',
    path: '/admin/groups/:group',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Delete a local group: its members lose what it was given and keep what they hold themselves. Admins only.',
    params: GroupRef,
    responses: { 204: { description: 'Deleted' }, ...ADMIN_REFUSALS, ...missing, ...providerManaged },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      await s.teamAdmin.deleteGroup(await groupNamed(s, params.group));
      return { status: 204 };
    },
  });

export const adminAddGroupMember = (s: Services) =>
  defineRoute({
    name: 'admin.groups.members.add',
    method: 'POST',
    path: '/admin/groups/:group/members',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Add an account (`user`: id or e-mail) to a local group: 201 when added, 200 when it was a member already. Admins only.',
    params: GroupRef,
    body: z.strictObject({ user: z.string().min(1).max(MAX_EMAIL_CHARS) }),
    responses: { 200: { description: 'Already a member', schema: z.object({ added: z.boolean() }) }, 201: { description: 'Added', schema: z.object({ added: z.boolean() }) }, ...ADMIN_REFUSALS, ...missing, ...providerManaged },
    async handler({ principal, params, body }) {
      await requireAdminCaller(s, principal);
      const added = await s.teamAdmin.addToGroup(await groupNamed(s, params.group), await accountNamed(s, body.user));
      return { status: added ? 201 : 200, body: { added } };
    },
  });

export const adminRemoveGroupMember = (s: Services) =>
  defineRoute({
    name: 'admin.groups.members.remove',
    method: 'DELETE',
    path: '/admin/groups/:group/members/:user',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Take an account out of a local group. Admins only.',
    params: GroupRef.extend({ user: z.string().min(1).max(MAX_EMAIL_CHARS) }),
    responses: { 204: { description: 'Removed' }, ...ADMIN_REFUSALS, ...missing, ...providerManaged },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      const removed = await s.teamAdmin.removeFromGroup(await groupNamed(s, params.group), await accountNamed(s, params.user));
      if (!removed) throw notFound('that account in the group');
      return { status: 204 };
    },
  });
