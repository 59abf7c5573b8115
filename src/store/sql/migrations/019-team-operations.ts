import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Running a team library without a shell (issue 61):
 * - `audit_events.by`: who caused an event, in one word (`user`, `admin`, `operator`, `sso`, `source`, `system`,
 *   `anonymous`); events written before get the word their `via` says.
 * - `users.admin_managed_by`: the identity provider that sets the account's admin flag at each sign-in
 *   (`--sso-admin-group`), so it is not changed here; `users.link_offered_at`: an admin (or the person) allowed the
 *   provider to take this local account over at its next sign-in with the same verified e-mail.
 * - `sessions.provider*`: a session signed in through the provider: which one, its subject and session id there
 *   (`sid`, for back-channel logout), its refresh token sealed under the secrets key, and when the provider last
 *   said the session still stands (the periodic re-check).
 * - `sources.held_deletions`: the deletions the guard holds for an owner's confirmation (JSON: why, how many, which
 *   documents), while passes go on adding and changing files.
 * - `notices`: what the web's bell shows each person (a source paused or failing), read or not.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('audit_events').addColumn('by', 'text').execute();
  // Events written before say who through `via` alone: the same word, once, so that `by` is never empty.
  await sql`update audit_events set by = case via when 'operator' then 'operator' when 'anonymous' then 'anonymous' when 'system' then 'system' else 'user' end`.execute(db);
  await db.schema.alterTable('users').addColumn('admin_managed_by', 'text').execute();
  await db.schema.alterTable('users').addColumn('link_offered_at', d.int64).execute();
  for (const [column, type] of [
    ['provider', 'text'],
    ['provider_subject', 'text'],
    ['provider_sid', 'text'],
    ['provider_refresh', 'text'],
    ['provider_checked_at', d.int64],
  ] as const) {
    await db.schema.alterTable('sessions').addColumn(column, type).execute();
  }
  await db.schema.createIndex('sessions_provider_subject').on('sessions').columns(['provider', 'provider_subject']).execute();
  await db.schema.alterTable('sources').addColumn('held_deletions', 'text').execute();

  await db.schema
    .createTable('notices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('subject_id', 'text')
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('link', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('read_at', d.int64)
    .execute();
  await db.schema.createIndex('notices_user').on('notices').columns(['user_id', 'read_at']).execute();
}
