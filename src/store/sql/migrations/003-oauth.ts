import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * OAuth 2.0: clients, authorization codes, grants and tokens. Codes, tokens and client secrets
 * are stored as SHA-256 hashes only. A grant is one user consent turned into tokens (one per
 * authorization code): revoking it (code reuse, refresh-token reuse, "revoke" in Connected apps)
 * kills every token issued under it at once. Times are `int64` (bigint on PostgreSQL; the same SQLite schema as released).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // The registering user (Settings → Applications); null for operator-registered and built-in clients.
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    // RFC 8252 §7.3: native apps get any port on the loopback interface.
    .addColumn('loopback_any_port', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_clients_user').on('oauth_clients').column('user_id').execute();

  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('revoked_at', d.int64)
    .execute();
  await db.schema.createIndex('oauth_grants_user').on('oauth_grants').columns(['user_id', 'client_id']).execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('expires_at', d.int64, (c) => c.notNull())
    .addColumn('used_at', d.int64)
    // The grant the code was exchanged for: revoked when the code is presented again.
    .addColumn('grant_id', 'text', (c) => c.references('oauth_grants.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('oauth_codes_expires').on('oauth_codes').column('expires_at').execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('expires_at', d.int64, (c) => c.notNull())
    // Refresh tokens: set when rotated; presenting it again is reuse.
    .addColumn('used_at', d.int64)
    .addColumn('revoked_at', d.int64)
    .execute();
  await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').column('grant_id').execute();
  await db.schema.createIndex('oauth_tokens_expires').on('oauth_tokens').column('expires_at').execute();

  // The CLI's built-in public client (`docsearch login`): no secret, PKCE required, loopback redirects.
  const now = Date.now();
  await sql`INSERT INTO oauth_clients (id, user_id, name, secret_hash, is_public, redirect_uris, loopback_any_port, created_at, updated_at)
            VALUES ('docsearch-cli', NULL, 'docsearch CLI', NULL, 1, '[]', 1, ${now}, ${now})`.execute(db);
}
