import { toIso } from '../../../core/clock.js';
import type { ApiKeyRecord } from '../../../store/sql/api-keys.js';

/** A key as the API shows it; `expired` by the daemon's clock (ApiKeyService.expired), so a client with a wrong clock still reads it right. */
export const keyToWire = (k: ApiKeyRecord, expired: boolean) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  last4: k.last4,
  scopes: k.scopes,
  project_ids: k.projectIds,
  created_at: toIso(k.createdAt),
  last_used_at: k.lastUsedAt === null ? null : toIso(k.lastUsedAt),
  expires_at: k.expiresAt === null ? null : toIso(k.expiresAt),
  expired,
});
