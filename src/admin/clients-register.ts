/**
 * What `docsearch clients add` does once its options hold: registers the OAuth client in the library's database and
 * prints its id and (for a confidential client) its secret, once. Loaded only when it runs.
 */
import { ClientService } from '../auth/oauth/clients.js';
import { systemClock } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { OAuthClientStore } from '../store/sql/oauth-clients.js';
import { CliError } from '../terminal/errors.js';
import { type IO, writeJson } from '../terminal/io.js';
import type { LibraryFlags } from './library-options.js';
import { operatorAudit } from './operator-audit.js';
import { openOperatorDatabase, operatorConfig } from './operator-database.js';

export interface ClientFlags extends LibraryFlags {
  name: string;
  redirectUri: string[];
  public?: boolean;
}

export async function registerClient(io: IO, flags: ClientFlags, json: boolean): Promise<void> {
  const config = operatorConfig(io, 'clients add', { 'data-dir': flags.dataDir, database: flags.database });
  const database = await openOperatorDatabase(config, { init: flags.init });
  try {
    const service = new ClientService(new OAuthClientStore(database.db, systemClock), systemClock, operatorAudit(database.db, 'clients add'));
    const { client, secret } = await service.register({ name: flags.name, redirectUris: flags.redirectUri, isPublic: !!flags.public, userId: null });
    if (json) return writeJson(io, { client_id: client.id, client_secret: secret ?? null, client_name: client.name, redirect_uris: client.redirectUris });
    io.stderr.write(
      `registered ${client.isPublic ? 'public' : 'confidential'} client "${client.name}" in ${database.shared ? database.location : config.dataDir}\n` +
        (secret ? 'the client secret is shown once — store it now\n' : 'public client: no secret; PKCE (S256) is required\n'),
    );
    io.stdout.write(`client_id: ${client.id}\n${secret ? `client_secret: ${secret}\n` : ''}`);
  } catch (err) {
    if (isAppError(err) && err.status < 500) throw new CliError(err.message);
    throw err;
  } finally {
    await database.close();
  }
}
