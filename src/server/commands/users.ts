import { password as promptPassword } from '@inquirer/prompts';
import { Command, Option } from 'commander';
import { AccountService } from '../../auth/accounts.js';
import { ApiKeyService } from '../../auth/api-keys.js';
import { parseScopes, SCOPES } from '../../auth/scopes.js';
import { systemClock } from '../../core/clock.js';
import { isAppError } from '../../core/errors.js';
import { CliError, UsageError } from '../../cli/errors.js';
import { canPrompt, type IO, readStdin } from '../../cli/io.js';
import { ApiKeyStore } from '../../store/sqlite/api-keys.js';
import { openSqlite } from '../../store/sqlite/database.js';
import { LoginAttemptStore } from '../../store/sqlite/login-attempts.js';
import { ProjectStore } from '../../store/sqlite/projects.js';
import { SetupTokenStore } from '../../store/sqlite/setup-tokens.js';
import { UserStore } from '../../store/sqlite/users.js';
import { resolveConfig } from '../config.js';
import { sqlitePath } from '../daemon.js';

async function readPassword(io: IO): Promise<string> {
  if (canPrompt(io)) {
    const first = await promptPassword({ message: 'Password:', mask: true }, { input: io.stdin, output: io.stderr });
    const again = await promptPassword({ message: 'Repeat password:', mask: true }, { input: io.stdin, output: io.stderr });
    if (first !== again) throw new CliError('the passwords do not match');
    return first;
  }
  if (io.stdin.isTTY) throw new UsageError('cannot prompt for a password here', 'pipe it on stdin: echo "$PASSWORD" | docsearch users add <email>');
  const text = await readStdin(io);
  return text.replace(/\r?\n$/, '');
}

/**
 * `docsearch users add`: operator provisioning straight into the data directory's database
 * (safe beside a running daemon: SQLite WAL). With --api-key it also prints a new key, once.
 */
export function usersCommand(io: IO): Command {
  const users = new Command('users').summary('manage accounts on this machine (operators)').description('Manage accounts in a data directory. Runs on the server machine; needs no running daemon.');
  users
    .command('add')
    .summary('create an account')
    .description('Create an account. The password is prompted for on a terminal and read from stdin otherwise.')
    .argument('<email>', 'the account email')
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
    .option('--api-key', 'also create an API key for the account and print it (once) on stdout')
    .addOption(new Option('--scopes <scopes>', `scopes of that key, comma or space separated (${SCOPES.join(', ')})`).default(SCOPES.join(',')))
    .option('--key-name <name>', 'name of that key', 'provisioned')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users add alice@example.com
  $ echo "$CI_PASSWORD" | docsearch users add ci@example.com --api-key --scopes write:documents,read:documents
`,
    )
    .action(async (email: string, flags: { dataDir?: string; apiKey?: boolean; scopes: string; keyName: string }) => {
      const { scopes, unknown } = parseScopes(flags.scopes);
      if (unknown.length > 0 || scopes.length === 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`, `valid scopes: ${SCOPES.join(', ')}`);
      const config = resolveConfig({ 'data-dir': flags.dataDir }, io.env);
      const password = await readPassword(io);
      const sqlite = await openSqlite(sqlitePath(config.dataDir));
      try {
        const now = systemClock;
        const accounts = new AccountService(new UserStore(sqlite.db, now), new ProjectStore(sqlite.db, now), new SetupTokenStore(sqlite.db, now), new LoginAttemptStore(sqlite.db, now));
        const user = await accounts.createUser(email, password);
        io.stderr.write(`created account ${user.email} (${user.id}) in ${config.dataDir}\n`);
        if (flags.apiKey) {
          const issued = await new ApiKeyService(new ApiKeyStore(sqlite.db, now), now).issue(user.id, flags.keyName, scopes);
          io.stderr.write(`API key (${scopes.join(' ')}) — shown once, store it now:\n`);
          io.stdout.write(`${issued.key}\n`);
        }
      } catch (err) {
        if (isAppError(err) && err.status < 500) throw new CliError(err.message);
        throw err;
      } finally {
        await sqlite.close();
      }
    });
  return users;
}
