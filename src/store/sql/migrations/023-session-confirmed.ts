import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * `sessions.confirmed_at` (sudo mode, server/web/sudo.ts): when the person at a signed-in session last proved who
 * they are, by signing in or by confirming their password or a passkey before a sensitive change; epoch ms. Null
 * for sessions of earlier releases: their next sensitive change asks.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('confirmed_at', dialectOf(db).int64).execute();
}
