import { KEYS_SCOPE } from '../../../auth/scopes.js';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ApiKey } from '../schemas.js';
import { keyToWire } from './wire.js';

export const listKeys = (s: Services) =>
  defineRoute({
    name: 'keys.list',
    method: 'GET',
    path: '/keys',
    scope: 'read:documents',
    credentials: ['api_key'],
    tokensWith: KEYS_SCOPE,
    tag: 'keys',
    summary:
      "The caller's API keys that are not revoked, expired ones included (with `expired: true`) until revoked. A key limited to projects sees only the keys limited within its own limit. The key itself is never returned after creation.",
    responses: { 200: { description: 'Keys not revoked, newest first', schema: z.object({ keys: z.array(ApiKey) }) } },
    async handler({ principal }) {
      const keys = (await s.apiKeys.list(principal.userId)).filter((k) => s.access.keyWithin(principal, k.projectIds));
      return { status: 200, body: { keys: keys.map((k) => keyToWire(k, s.apiKeys.expired(k))) } };
    },
  });
