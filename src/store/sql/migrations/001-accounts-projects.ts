import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Dialect-aware since PostgreSQL joined (the SQLite schema it makes is unchanged, test/store/migrations.test.ts
 * holds it to the released one): times are `int64` (bigint on PostgreSQL), and the case-insensitive unique
 * indexes fold ASCII case on both engines (NOCASE on SQLite, lower() under the "C" collation on PostgreSQL).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await d.uniqueIndexIgnoringCase('users_email', 'users', [], 'email').execute(db);

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('expires_at', d.int64, (c) => c.notNull())
    .addColumn('last_seen_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('setup_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('used_at', d.int64)
    .execute();

  await db.schema
    .createTable('login_attempts')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_start', d.int64, (c) => c.notNull())
    .addColumn('locked_until', d.int64)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('last_used_at', d.int64)
    .addColumn('revoked_at', d.int64)
    .execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await d.uniqueIndexIgnoringCase('projects_user_name', 'projects', ['user_id'], 'name').execute(db);

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
