import { z } from 'zod';
import { toIso } from '../../../core/clock.js';
import type { OpenInvite } from '../../../store/sql/invites.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Timestamp } from '../schemas.js';
import { ADMIN_REFUSALS, requireAdminCaller } from './guard.js';
import { IssuedLink, issuedToWire } from './users.js';
import { MAX_EMAIL_CHARS, MAX_INVITES, MAX_NAME_CHARS } from '../../../core/name-limits.js';

export const Invitation = z
  .object({
    id: z.string().describe('what DELETE /admin/invitations/{id} takes'),
    email: z.string(),
    admin: z.boolean().describe('the account it makes is an admin'),
    group: z.string().nullable().describe('the local group the account it makes joins'),
    created_at: Timestamp,
    expires_at: Timestamp,
    created_by: z.object({ id: z.string(), email: z.string().nullable() }).nullable().describe('the admin who made it; null: an operator on the server machine'),
  })
  .meta({ id: 'Invitation' });

async function invitationsToWire(s: Services, invites: OpenInvite[]): Promise<z.infer<typeof Invitation>[]> {
  const groups = new Map((await s.teamAdmin.listGroups()).map((g) => [g.id, g.name]));
  return invites.map((i) => ({
    id: i.id,
    email: i.email,
    admin: i.admin,
    group: i.groupId === null ? null : (groups.get(i.groupId) ?? null),
    created_at: toIso(i.createdAt),
    expires_at: toIso(i.expiresAt),
    created_by: i.createdBy,
  }));
}

export const adminListInvitations = (s: Services) =>
  defineRoute({
    name: 'admin.invitations.list',
    method: 'GET',
    path: '/admin/invitations',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'Open invitations (not used, not expired, not revoked), newest first, with who made them and when they expire; never their links. Admins only.',
    responses: { 200: { description: 'The invitations', schema: z.object({ invitations: z.array(Invitation) }) }, ...ADMIN_REFUSALS },
    async handler({ principal }) {
      await requireAdminCaller(s, principal);
      return { status: 200, body: { invitations: await invitationsToWire(s, await s.teamAdmin.openInvites()) } };
    },
  });

export const adminCreateInvitations = (s: Services) =>
  defineRoute({
    name: 'admin.invitations.create',
    method: 'POST',
    path: '/admin/invitations',
    scope: 'write:documents',
    tag: 'admin',
    summary: `Invite one or more people (up to ${MAX_INVITES} addresses): each gets a one-time link, valid 7 days, that makes their account, as an admin (\`admin\`) or in a local group (\`group\`) when asked. With a mail server the links are mailed (unless \`send\` is false); otherwise each is answered once. Each address is made or refused on its own: 201 when every one was made, 207 when some were refused. Admins only.`,
    body: z.strictObject({
      emails: z.array(z.string().max(MAX_EMAIL_CHARS)).min(1).max(MAX_INVITES).describe('the addresses'),
      admin: z.boolean().default(false),
      group: z.string().trim().min(1).max(MAX_NAME_CHARS).optional().describe('a local group (by name) the accounts join'),
      send: z.boolean().default(true).describe('mail the links when the server can send mail'),
    }),
    responses: {
      201: { description: 'Every invitation made', schema: z.object({ invitations: z.array(z.object({ email: z.string(), id: z.string() }).extend(IssuedLink.shape)), refused: z.array(z.object({ email: z.string(), error: z.string() })) }) },
      207: { description: 'Some addresses refused (an account exists, not an address): the rest were made', schema: z.object({ invitations: z.array(z.object({ email: z.string(), id: z.string() }).extend(IssuedLink.shape)), refused: z.array(z.object({ email: z.string(), error: z.string() })) }) },
      400: { description: 'Invalid body', schema: ErrorBody },
      ...ADMIN_REFUSALS,
      404: { description: 'No such group', schema: ErrorBody },
      409: { description: 'The group comes from an identity provider', schema: ErrorBody },
    },
    async handler({ principal, body }) {
      const admin = await requireAdminCaller(s, principal);
      const group = body.group ? await s.teamAdmin.group(body.group) : null;
      if (group) s.teamAdmin.local(group);
      const outcomes = await s.teamAdmin.inviteMany(body.emails, admin, { admin: body.admin, group, send: body.send });
      const invitations = outcomes.flatMap((o) => (o.ok ? [{ email: o.email, id: o.issued.id, ...issuedToWire(s, '/invite', o.issued) }] : []));
      const refused = outcomes.flatMap((o) => (o.ok ? [] : [{ email: o.email, error: o.error }]));
      return { status: refused.length > 0 ? 207 : 201, body: { invitations, refused } };
    },
  });

export const adminRevokeInvitation = (s: Services) =>
  defineRoute({
    name: 'admin.invitations.revoke',
    method: 'DELETE',
    path: '/admin/invitations/:id',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Revoke an open invitation: its link stops working at once. Admins only.',
    params: z.strictObject({ id: z.string().min(1).max(40) }),
    responses: { 204: { description: 'Revoked' }, ...ADMIN_REFUSALS, 404: { description: 'No such open invitation', schema: ErrorBody } },
    async handler({ principal, params }) {
      await requireAdminCaller(s, principal);
      await s.teamAdmin.revokeInvite(params.id);
      return { status: 204 };
    },
  });
