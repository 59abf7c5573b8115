import { type Kysely, sql } from 'kysely';

/**
 * An account is linked to one subject per provider (docs/sso.md), as one subject is to one account (017's
 * identities_provider_subject): the rule was checked in code only, so two links made at once (Settings → Security
 * in two tabs, or a link and a first sign-in by e-mail) could both pass it. A library where that happened keeps,
 * per account and provider, the link last signed in with (the newest id on a tie); the others go, and their subjects
 * are refused as any other subject of a linked account is, instead of the upgrade failing on them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM identities WHERE EXISTS (
    SELECT 1 FROM identities o WHERE o.user_id = identities.user_id AND o.provider = identities.provider
      AND (o.last_sign_in_at > identities.last_sign_in_at OR (o.last_sign_in_at = identities.last_sign_in_at AND o.id > identities.id)))`.execute(db);
  await db.schema.dropIndex('identities_user').execute();
  await db.schema.createIndex('identities_user').on('identities').columns(['user_id', 'provider']).unique().execute();
}
