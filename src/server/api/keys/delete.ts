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
    summary: 'Revoke an API key; it stops working at once.',
    params: IdParams,
    responses: { 204: { description: 'Revoked' }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, principal }) {
      if (!(await s.apiKeys.revoke(principal.userId, params.id))) throw notFound('API key');
      return { status: 204 };
    },
  });
