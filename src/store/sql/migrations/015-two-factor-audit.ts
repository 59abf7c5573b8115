import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Accounts an organisation can trust (issue 52): second factors, passkeys, the audit log, sessions one can list.
 * - `totp_secrets`: an account's authenticator-app secret, sealed (AES-256-GCM under the key outside the database,
 *   see core/sealed-secret.ts); `enabled_at` null while it is being set up; `last_step` the last time step accepted,
 *   so no code is accepted twice.
 * - `recovery_codes`: one-time codes, only their hashes; `used_at` once used.
 * - `passkeys`: WebAuthn credentials (their public keys: nothing secret). `users.passkey_sign_in`: 1 when a passkey
 *   alone signs the account in (passwordless), 0 when it is a second factor after the password.
 * - `sessions`: how each was signed in (`signed_in_with`), from which address and browser, the account waiting for
 *   its second factor (`pending_user_id` until `pending_until`), and a WebAuthn challenge with its expiry.
 * - `audit_events`: append-only, in the database every replica writes, so replicas keep one log. Who, from where,
 *   what and to what; `actor_email` as it was then (accounts change e-mail or are deleted). No foreign keys: events
 *   outlive what they name.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('users').addColumn('passkey_sign_in', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  for (const [column, type] of [
    ['signed_in_with', 'text'],
    ['client_ip', 'text'],
    ['user_agent', 'text'],
    ['pending_user_id', 'text'],
    ['pending_until', d.int64],
    ['challenge', 'text'],
    ['challenge_until', d.int64],
  ] as const) {
    await db.schema.alterTable('sessions').addColumn(column, type).execute();
  }
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('totp_secrets')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('enabled_at', d.int64)
    .addColumn('last_step', d.int64)
    .execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('used_at', d.int64)
    .execute();
  await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();

  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', d.int64, (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('backed_up', 'integer', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('last_used_at', d.int64)
    .execute();
  await db.schema.createIndex('passkeys_credential').unique().on('passkeys').column('credential_id').execute();
  await db.schema.createIndex('passkeys_user').on('passkeys').column('user_id').execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', d.int64, (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_email', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('target_label', 'text')
    .addColumn('client_ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  // Ids sort by time: the newest first, and by who, what kind, or to what (the API's filters).
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor_id', 'id']).execute();
  await db.schema.createIndex('audit_events_type').on('audit_events').columns(['type', 'id']).execute();
  await db.schema.createIndex('audit_events_target').on('audit_events').columns(['target_id', 'id']).execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
}
