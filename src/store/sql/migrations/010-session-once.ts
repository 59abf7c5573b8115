import type { Kysely } from 'kysely';

/**
 * `sessions.once_sealed`: what a form created for the next page to show once (a new API key, a client secret),
 * so the form can answer with a redirect (a reload then re-posts nothing). Sealed with a key derived from the
 * session's cookie value, which is never stored: the database alone can't read it. Cleared by the page that shows it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('once_sealed', 'text').execute();
}
