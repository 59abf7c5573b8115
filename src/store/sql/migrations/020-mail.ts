import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * E-mail and what it carries (issue 61, docs/mail.md):
 * - `mail_outbox`: mail waiting to be sent, written in the transaction that causes it, sent by one replica at a time
 *   under a row claim (`claimed_by`, `claimed_until`), retried with backoff; the body (which may hold a one-time
 *   link) is sealed under the secrets key and dropped once sent.
 * - `password_resets`: one-time links that set a new password (only their SHA-256 is kept).
 * - `invites.is_admin`, `invites.group_id`: what the account an invitation makes gets.
 * - `users.last_sign_in_at`: Admin → Users' "last sign-in".
 * - `known_devices`: browsers an account has signed in from (a cookie's hash), so a sign-in from a new one is told.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body_sealed', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', d.int64, (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', d.int64)
    .addColumn('last_error', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('sent_at', d.int64)
    .addColumn('message_id', 'text')
    .execute();
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_by', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('expires_at', d.int64, (c) => c.notNull())
    .addColumn('used_at', d.int64)
    .execute();
  await db.schema.createIndex('password_resets_user').on('password_resets').column('user_id').execute();
  await db.schema.alterTable('invites').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('invites').addColumn('group_id', 'text').execute();
  await db.schema.alterTable('users').addColumn('last_sign_in_at', d.int64).execute();
  await db.schema
    .createTable('known_devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_agent', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('last_seen_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('known_devices_user').on('known_devices').column('user_id').execute();
}
