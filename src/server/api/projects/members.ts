import { z } from 'zod';
import { ROLES } from '../../../access/roles.js';
import type { Member } from '../../../access/sharing.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Project } from '../schemas.js';
import { oneProjectToWire } from './wire.js';
import { MAX_EMAIL_CHARS } from '../../../core/name-limits.js';

export const MemberSchema = z
  .object({
    id: z.string().describe("the user's or the group's id (what DELETE …/members/{member_id} takes)"),
    kind: z.enum(['user', 'group']),
    email: z.string().optional().describe("a user's e-mail"),
    group: z.string().optional().describe("a group's name"),
    role: z.enum(ROLES),
  })
  .meta({ id: 'ProjectMember' });

const memberToWire = (m: Member) => ({ id: m.id, kind: m.kind, ...(m.email !== undefined ? { email: m.email } : {}), ...(m.group !== undefined ? { group: m.group } : {}), role: m.role });

const Role = z.enum(ROLES).describe('viewer: search and read; editor: also upload, rename, move, retry and delete documents; owner: also share, rename, delete and transfer the project');

const refusals = {
  403: { description: 'A member who is not an owner (or a sharing policy that does not allow it)', schema: ErrorBody },
  404: { description: 'No such project, or one the caller may not read (its existence does not leak); or no such user, group or member', schema: ErrorBody },
};

export const listMembers = (s: Services) =>
  defineRoute({
    name: 'projects.members.list',
    method: 'GET',
    path: '/projects/:id/members',
    scope: 'read:documents',
    tag: 'sharing',
    summary: "Who may use the project and how: its owner of record first, then every user and group it is shared with, with their role. Owners only.",
    params: IdParams,
    responses: { 200: { description: 'The members', schema: z.object({ members: z.array(MemberSchema) }) }, ...refusals },
    async handler({ params, principal }) {
      return { status: 200, body: { members: (await s.sharing.members(principal, params.id)).map(memberToWire) } };
    },
  });

export const addMember = (s: Services) =>
  defineRoute({
    name: 'projects.members.add',
    method: 'POST',
    path: '/projects/:id/members',
    scope: 'write:documents',
    tag: 'sharing',
    summary:
      "Share the project with a user (`email`) or a group (`group`), or change their role: 201 for a new member, 200 for a changed one. Owners only, within the instance's sharing policy.",
    params: IdParams,
    body: z
      .strictObject({
        email: z.string().trim().min(3).max(MAX_EMAIL_CHARS).optional().describe('the user to share with'),
        group: z.string().trim().min(1).max(100).optional().describe('or the group to share with, by name'),
        role: Role,
      })
      .refine((b) => (b.email === undefined) !== (b.group === undefined), { message: 'give either email or group' }),
    responses: {
      200: { description: 'The member, role changed', schema: MemberSchema },
      201: { description: 'The member, new', schema: MemberSchema },
      400: { description: 'Invalid body', schema: ErrorBody },
      ...refusals,
      409: { description: 'The user owns the project of record already, or is disabled', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      const target = body.email !== undefined ? { email: body.email } : { group: body.group! };
      const { member, created } = await s.sharing.share(principal, params.id, target, body.role);
      return { status: created ? 201 : 200, body: memberToWire(member) };
    },
  });

export const removeMember = (s: Services) =>
  defineRoute({
    name: 'projects.members.remove',
    method: 'DELETE',
    path: '/projects/:id/members/:member_id',
    scope: 'write:documents',
    tag: 'sharing',
    summary: 'Stop sharing the project with a user or group (what they uploaded stays). Owners only; the owner of record cannot be removed (transfer first).',
    params: z.strictObject({ id: z.string().min(1).max(100), member_id: z.string().min(1).max(100) }),
    responses: { 204: { description: 'Removed' }, ...refusals, 409: { description: 'The owner of record', schema: ErrorBody } },
    async handler({ params, principal }) {
      await s.sharing.unshare(principal, params.id, params.member_id);
      return { status: 204 };
    },
  });

export const transferProject = (s: Services) =>
  defineRoute({
    name: 'projects.transfer',
    method: 'POST',
    path: '/projects/:id/transfer',
    scope: 'write:documents',
    tag: 'sharing',
    summary: 'Make another user (`email`) the owner of record of the project. The previous one stays an owner until removed. Owners only.',
    params: IdParams,
    body: z.strictObject({ email: z.string().trim().min(3).max(MAX_EMAIL_CHARS) }),
    responses: {
      200: { description: 'The project', schema: Project },
      400: { description: 'Invalid body', schema: ErrorBody },
      ...refusals,
      409: { description: 'The new owner has a project of that name already, is disabled, or another owner gave the project to someone else meanwhile', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      const project = await s.sharing.transfer(principal, params.id, body.email);
      return { status: 200, body: await oneProjectToWire(s, principal, project) };
    },
  });
