import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { ADMIN_REFUSALS, requireAdminCaller } from './guard.js';
import { UsageSchema } from './users.js';

const AdminProjectQuota = z
  .object({
    id: z.string(),
    name: z.string(),
    quota_bytes: z.number().int().nullable().describe('the most its live documents may hold, in bytes; null: no quota'),
    usage: UsageSchema.describe('what its live documents hold (not replaced, not in the Trash)'),
  })
  .meta({ id: 'AdminProjectQuota' });

export const adminUpdateProject = (s: Services) =>
  defineRoute({
    name: 'admin.projects.update',
    method: 'PATCH',
    path: '/admin/projects/:project',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Give any project a quota (`quota_bytes`; null: none): past it an upload into it is refused (507 `quota_exceeded`) and its sources pause. Admins only.',
    params: z.strictObject({ project: z.string().min(1).max(64) }),
    body: z.strictObject({ quota_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().describe('in bytes; null: no quota') }),
    responses: {
      200: { description: 'The project’s quota and usage', schema: AdminProjectQuota },
      400: { description: 'Invalid body', schema: ErrorBody },
      ...ADMIN_REFUSALS,
      404: { description: 'No such project', schema: ErrorBody },
    },
    async handler({ principal, params, body }) {
      await requireAdminCaller(s, principal);
      const project = await s.projects.get(params.project);
      if (!project) throw notFound('project');
      await s.teamAdmin.setProjectQuota(project, body.quota_bytes);
      const { quotaBytes, usage } = await s.teamAdmin.projectUsage(project.id);
      return { status: 200, body: { id: project.id, name: project.name, quota_bytes: quotaBytes, usage } };
    },
  });
