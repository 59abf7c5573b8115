import { z } from 'zod';
import { GRANT_SCOPES } from '../../auth/scopes.js';
import { toIso } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';
import { ErrorBody, Timestamp } from './schemas.js';

const Me = z
  .object({
    id: z.string().describe('the account id'),
    email: z.string(),
    kind: z.enum(['api_key', 'oauth', 'session']).describe('what the presented credential is'),
    scopes: z.array(z.enum(GRANT_SCOPES)).describe('the scopes this credential carries'),
    admin: z.boolean().describe('whether the account is an admin of this docsearch (manages accounts, groups and the sharing policy)'),
    admin_from: z.string().nullable().describe("the identity provider whose admin group sets `admin` at every sign-in (it is not changed here); null: set here"),
    project_ids: z.array(z.string()).nullable().describe('the projects this credential is limited to (a per-project key); null: every project the account may read'),
    expires_at: Timestamp.nullable().describe('when this credential stops working (an API key given an expiry, an access token); null: a key that never expires, or a web session'),
  })
  .meta({ id: 'Me' });

export const me = (s: Services) =>
  defineRoute({
    name: 'me',
    method: 'GET',
    path: '/me',
    scope: 'authenticated',
    tag: 'account',
    summary: 'The account behind the presented credential, what kind of credential it is and its scopes. Any valid credential may ask.',
    responses: { 200: { description: 'The caller', schema: Me }, 404: { description: 'The account was deleted', schema: ErrorBody } },
    async handler({ principal }) {
      const user = await s.accounts.findUser(principal.userId);
      if (!user) throw notFound('account');
      return {
        status: 200,
        body: {
          id: user.id,
          email: user.email,
          kind: principal.kind,
          scopes: principal.scopes,
          admin: user.isAdmin,
          admin_from: user.adminManagedBy,
          project_ids: principal.projectLimit,
          expires_at: principal.expiresAt === undefined ? null : toIso(principal.expiresAt),
        },
      };
    },
  });
