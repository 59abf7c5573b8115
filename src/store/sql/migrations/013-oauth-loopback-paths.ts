import type { Kysely } from 'kysely';

/**
 * OAuth hardening (issue 52's security probe):
 * - the built-in CLI client registers the redirect URIs it uses, `http://127.0.0.1/callback` and
 *   `http://[::1]/callback`: a loopback client may present a registered URI on any port, and only the port
 *   varies (RFC 8252 §7.3); until now it had none and took any path;
 * - codes and grants are looked up by client: registering a client deletes the oldest dynamically registered
 *   ones that never got a code or a grant once there are too many, and the hourly purge asks the same.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('oauth_clients')
    .set({ redirect_uris: JSON.stringify(['http://127.0.0.1/callback', 'http://[::1]/callback']) })
    .where('id', '=', 'docsearch-cli')
    .execute();
  await db.schema.createIndex('oauth_grants_client').on('oauth_grants').column('client_id').execute();
  await db.schema.createIndex('oauth_codes_client').on('oauth_codes').column('client_id').execute();
}
