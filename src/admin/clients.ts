import { Command } from 'commander';
import { UsageError } from '../terminal/errors.js';
import type { IO } from '../terminal/io.js';
import { libraryOptions } from './library-options.js';
import { wantsJson } from './json-flag.js';
import type { ClientFlags } from './clients-register.js';

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
  libraryOptions(
    clients
      .command('add')
      .summary('register an OAuth client')
      .description('Register an application for the authorization code grant. Prints client_id and client_secret on stdout; the secret is shown only this once.')
      .requiredOption('--name <name>', 'application name, shown on the consent screen')
      .option('--redirect-uri <uri>', 'a redirect URI (repeat for several); matched exactly', collect, [] as string[])
      .option('--public', 'a public client (native or browser app): no secret, PKCE required')
      .option('--json', 'print {client_id, client_secret, client_name, redirect_uris} on stdout (client_secret null for a public client) and no notices on stderr')
  )
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch clients add --name "Notes app" --redirect-uri https://notes.example.com/oauth/callback
  $ docsearch clients add --name "Desktop app" --redirect-uri http://127.0.0.1:8765/callback --public
`,
    )
    .action(async (flags: ClientFlags, cmd: Command) => {
      if (flags.redirectUri.length === 0) throw new UsageError('at least one --redirect-uri is required', 'e.g. --redirect-uri https://app.example.com/oauth/callback');
      await (await import('./clients-register.js')).registerClient(io, flags, wantsJson(cmd));
    });
  return clients;
}
