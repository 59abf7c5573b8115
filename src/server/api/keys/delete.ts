import { KEYS_SCOPE } from '../../../auth/scopes.js';
import { notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

export const deleteKey = (s: Services) =>
  defineRoute({
    name: 'keys.delete',
    method: 'DELETE',
    path: '/keys/:id',
    scope: 'write:documents',
    credentials: ['api_key'],
    tokensWith: KEYS_SCOPE,
    tag: 'keys',
    summary: 'Revoke an API key; it stops working at once. A key limited to projects revokes only keys limited within its own limit (any other is not found).',
    params: IdParams,
    responses: { 204: { description: 'Revoked' }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      const key = (await s.apiKeys.list(principal.userId)).find((k) => k.id === params.id);
      if (!key || !s.access.keyWithin(principal, key.projectIds) || !(await s.apiKeys.revoke(principal.userId, key.id))) throw notFound('API key');
      return { status: 204 };
    },
  });
