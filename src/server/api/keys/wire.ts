import { toIso } from '../../../core/clock.js';
import type { ApiKeyRecord } from '../../../store/sql/api-keys.js';

export const keyToWire = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  last4: k.last4,
  scopes: k.scopes,
  project_ids: k.projectIds,
  created_at: toIso(k.createdAt),
  last_used_at: k.lastUsedAt === null ? null : toIso(k.lastUsedAt),
});
