import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * API keys that expire (issue 53, docs/api.md#api-keys): `api_keys.expires_at`, epoch milliseconds from which the
 * key no longer authenticates; null for a key that never expires, which every key made before this migration is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('expires_at', dialectOf(db).int64).execute();
}
