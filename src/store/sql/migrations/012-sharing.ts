import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Teams (issue 50, docs/permissions.md): projects shared with users and groups, admins, disabled and deleted
 * accounts, per-project API keys, invitations.
 * - `users.is_admin`: the oldest account of an existing library becomes its admin, as the first account of a new
 *   one does. `disabled_at`: signs in to nothing. `deleted_at`: a deleted account is kept as a row without an
 *   e-mail or password (so the documents it uploaded keep their uploader and their rows: `documents.user_id`
 *   cascades on delete), hidden from every list.
 * - `groups` and `group_members`: `source` is 'local' (managed by admins) or the identity provider's (synced at
 *   sign-in, read-only here).
 * - `project_members`: a user's or a group's role on a project. The project's owner of record
 *   (`projects.user_id`) is an owner without a row.
 * - `api_keys.project_ids`: a JSON array of the projects a key is limited to; null for every project its user reads.
 * - `invites`: one-time links an admin makes for an e-mail address; only the hash of the link's token is kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('users').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('users').addColumn('disabled_at', d.int64).execute();
  await db.schema.alterTable('users').addColumn('deleted_at', d.int64).execute();
  const oldest = await db.selectFrom('users').select('id').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  if (oldest) await db.updateTable('users').set({ is_admin: 1 }).where('id', '=', oldest.id).execute();

  await db.schema
    .createTable('groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('local'))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await d.uniqueIndexIgnoringCase('groups_name', 'groups', [], 'name').execute(db);

  // One key column each (`id`, the pair joined), as every table has: `migrate` pages through tables by it.
  await db.schema
    .createTable('group_members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('group_members_user').on('group_members').column('user_id').execute();

  await db.schema
    .createTable('project_members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    // A user's or a group's id (their prefixes tell them apart; `member_kind` says it without parsing).
    .addColumn('member_id', 'text', (c) => c.notNull())
    .addColumn('member_kind', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_members_member').on('project_members').columns(['member_id', 'project_id']).execute();

  await db.schema.alterTable('api_keys').addColumn('project_ids', 'text').execute();

  await db.schema
    .createTable('invites')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('expires_at', d.int64, (c) => c.notNull())
    .addColumn('used_at', d.int64)
    .execute();

  // Documents are listed and counted by project now, whoever uploaded them (a shared project holds several people's
  // uploads): 008's per-user list indexes, by project. (user_id, id) stays, for what one person uploaded.
  await sql`CREATE INDEX documents_project_order ON documents (project_id, id)`.execute(db);
  await sql`CREATE INDEX documents_project_name ON documents (project_id, lower(filename), id)`.execute(db);
  await sql`CREATE INDEX documents_project_size ON documents (project_id, size_bytes, id)`.execute(db);
  await sql`CREATE INDEX documents_project_status_order ON documents (project_id, status, id)`.execute(db);
  await sql`CREATE INDEX documents_project_counts ON documents (project_id, chunk_count, size_bytes)`.execute(db);
  for (const index of ['documents_user_name', 'documents_user_size', 'documents_user_status_order', 'documents_user_project_counts']) {
    await sql`DROP INDEX ${sql.raw(index)}`.execute(db);
  }
}
