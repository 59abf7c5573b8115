import { Command } from 'commander';
import { ClientService } from '../auth/oauth/clients.js';
import { systemClock } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { CliError, UsageError } from '../terminal/errors.js';
import { type IO, writeJson } from '../terminal/io.js';
import { OAuthClientStore } from '../store/sql/oauth-clients.js';
import { databaseOption, initOption, openOperatorDatabase, operatorConfig } from './operator-database.js';
import { operatorAudit } from './operator-audit.js';
import { wantsJson } from './json-flag.js';

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * `docsearch clients add`: registers an OAuth client straight into the library's database (safe beside
 * running daemons: SQLite WAL, or PostgreSQL with --database). Prints client_id and — for confidential
 * clients — the client secret, once; only the secret's SHA-256 is stored.
 */
export function clientsCommand(io: IO): Command {
  const clients = new Command('clients')
    .summary('manage OAuth clients on this machine (operators)')
    .description('Register OAuth 2.0 clients (applications) in a data directory, or in the PostgreSQL database of a shared-mode library. Runs on the server machine; needs no running daemon.');
  clients
    .command('add')
    .summary('register an OAuth client')
    .description('Register an application for the authorization code grant. Prints client_id and client_secret on stdout; the secret is shown only this once.')
    .requiredOption('--name <name>', 'application name, shown on the consent screen')
    .option('--redirect-uri <uri>', 'a redirect URI (repeat for several); matched exactly', collect, [] as string[])
    .option('--public', 'a public client (native or browser app): no secret, PKCE required')
    .option('--json', 'print {client_id, client_secret, client_name, redirect_uris} on stdout (client_secret null for a public client) and no notices on stderr')
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .addOption(initOption())
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch clients add --name "Notes app" --redirect-uri https://notes.example.com/oauth/callback
  $ docsearch clients add --name "Desktop app" --redirect-uri http://127.0.0.1:8765/callback --public
`,
    )
    .action(async (flags: { name: string; redirectUri: string[]; public?: boolean; dataDir?: string; database?: string; init?: boolean }, cmd: Command) => {
      if (flags.redirectUri.length === 0) throw new UsageError('at least one --redirect-uri is required', 'e.g. --redirect-uri https://app.example.com/oauth/callback');
      const config = operatorConfig(io, 'clients add', { 'data-dir': flags.dataDir, database: flags.database });
      const database = await openOperatorDatabase(config, { init: flags.init });
      try {
        const service = new ClientService(new OAuthClientStore(database.db, systemClock), systemClock, operatorAudit(database.db, 'clients add'));
        const { client, secret } = await service.register({ name: flags.name, redirectUris: flags.redirectUri, isPublic: !!flags.public, userId: null });
        if (wantsJson(cmd)) return writeJson(io, { client_id: client.id, client_secret: secret ?? null, client_name: client.name, redirect_uris: client.redirectUris });
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
    });
  return clients;
}
