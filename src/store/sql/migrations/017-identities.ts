import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Sign-in through an identity provider (issue 51, docs/sso.md): `identities` links an account to who it is at a
 * provider — an OpenID Connect issuer and its `sub`, or the trusted-header proxy and its user name. One subject of a
 * provider is one account; an account may be linked at several providers. A link goes with its account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('identities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('last_sign_in_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identities_provider_subject').on('identities').columns(['provider', 'subject']).unique().execute();
  await db.schema.createIndex('identities_user').on('identities').columns(['user_id', 'provider']).execute();
}
