import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Quotas (issue 61, docs/operations.md#quotas): `users.quota_bytes` and `projects.quota_bytes`, an admin's limit on
 * what the live documents an account uploaded, or a project holds, may add up to. Null: the default
 * (`--quota-default` for accounts; none for projects).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('users').addColumn('quota_bytes', d.int64).execute();
  await db.schema.alterTable('projects').addColumn('quota_bytes', d.int64).execute();
}
