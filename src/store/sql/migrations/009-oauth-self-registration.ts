import type { Kysely } from 'kysely';

/**
 * MCP clients (docs/oauth.md): clients that register themselves, and tokens bound to one resource.
 * - `oauth_clients.registration`: who registered the client — 'operator' (`docsearch clients add`, built in),
 *   'user' (Settings → Applications), 'dynamic' (RFC 7591) or 'metadata_document' (the client_id is the URL of
 *   its metadata document). Existing rows are the operator's or a user's, told apart by user_id.
 * - `oauth_clients.client_uri`: the home page a self-registered client names, shown (never fetched) on consent.
 * - `resource` on codes, grants and tokens (RFC 8707): the resource a token is for; null = the REST API, which
 *   is what every token issued before this migration is for.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_clients').addColumn('registration', 'text', (c) => c.notNull().defaultTo('operator')).execute();
  await db.updateTable('oauth_clients').set({ registration: 'user' }).where('user_id', 'is not', null).execute();
  await db.schema.alterTable('oauth_clients').addColumn('client_uri', 'text').execute();
  // The hourly purge looks for self-registered clients by age.
  await db.schema.createIndex('oauth_clients_registration').on('oauth_clients').columns(['registration', 'created_at']).execute();
  for (const table of ['oauth_codes', 'oauth_grants', 'oauth_tokens']) await db.schema.alterTable(table).addColumn('resource', 'text').execute();
}
