import { password as promptPassword } from '@inquirer/prompts';
import { Command, Option } from 'commander';
import { AccountService } from '../auth/accounts.js';
import { ApiKeyService } from '../auth/api-keys.js';
import { parseScopes, SCOPES } from '../auth/scopes.js';
import { systemClock } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { CliError, UsageError } from '../terminal/errors.js';
import { canPrompt, type IO, readStdin } from '../terminal/io.js';
import { ApiKeyStore } from '../store/sql/api-keys.js';
import { LoginAttemptStore } from '../store/sql/login-attempts.js';
import { ProjectStore } from '../store/sql/projects.js';
import { SessionStore } from '../store/sql/sessions.js';
import { SetupTokenStore } from '../store/sql/setup-tokens.js';
import { UserStore } from '../store/sql/users.js';
import { databaseOption, openOperatorDatabase, operatorConfig } from './operator-database.js';
import { operatorAudit } from './operator-audit.js';
import { resetTwoFactorCommand } from './users-two-factor.js';

async function readPassword(io: IO, command = 'users add'): Promise<string> {
  if (canPrompt(io)) {
    const first = await promptPassword({ message: 'Password:', mask: true }, { input: io.stdin, output: io.stderr });
    const again = await promptPassword({ message: 'Repeat password:', mask: true }, { input: io.stdin, output: io.stderr });
    if (first !== again) throw new CliError('the passwords do not match');
    return first;
  }
  if (io.stdin.isTTY) throw new UsageError('cannot prompt for a password here', `pipe it on stdin: echo "$PASSWORD" | docsearch ${command} <email>`);
  const text = await readStdin(io);
  return text.replace(/\r?\n$/, '');
}

/**
 * `docsearch users add`: operator provisioning straight into the library's database (safe beside running
 * daemons: SQLite WAL, or PostgreSQL with --database). With --api-key it also prints a new key, once.
 */
export function usersCommand(io: IO): Command {
  const users = new Command('users')
    .summary('manage accounts on this machine (operators)')
    .description('Manage accounts in a data directory, or in the PostgreSQL database of a shared-mode library. Runs on the server machine; needs no running daemon.');
  users
    .command('add')
    .summary('create an account')
    .description('Create an account. The password is prompted for on a terminal and read from stdin otherwise.')
    .argument('<email>', 'the account email')
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .option('--api-key', 'also create an API key for the account and print it (once) on stdout')
    .addOption(new Option('--scopes <scopes>', `scopes of that key, comma or space separated (${SCOPES.join(', ')})`).default(SCOPES.join(',')))
    .option('--key-name <name>', 'name of that key', 'provisioned')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users add alice@example.com
  $ echo "$CI_PASSWORD" | docsearch users add ci@example.com --api-key --scopes write:documents,read:documents
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db.internal/docsearch docsearch users add bob@example.com
`,
    )
    .action(async (email: string, flags: { dataDir?: string; database?: string; apiKey?: boolean; scopes: string; keyName: string }) => {
      const { scopes, unknown } = parseScopes(flags.scopes);
      if (unknown.length > 0 || scopes.length === 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`, `valid scopes: ${SCOPES.join(', ')}`);
      const config = operatorConfig(io, 'users add', { 'data-dir': flags.dataDir, database: flags.database });
      const password = await readPassword(io);
      const database = await openOperatorDatabase(config);
      try {
        const { db } = database;
        const now = systemClock;
        const accounts = new AccountService(new UserStore(db, now), new ProjectStore(db, now), new SetupTokenStore(db, now), new LoginAttemptStore(db, now));
        const audit = operatorAudit(db, 'users add');
        const user = await accounts.createUser(email, password);
        await audit.record({ type: 'account.created', target: { type: 'account', id: user.id, label: user.email }, details: { how: 'docsearch users add' } });
        io.stderr.write(`created account ${user.email} (${user.id}) in ${database.shared ? database.location : config.dataDir}\n`);
        if (flags.apiKey) {
          const issued = await new ApiKeyService(new ApiKeyStore(db, now), now, audit).issue(user.id, flags.keyName, scopes);
          io.stderr.write(`API key (${scopes.join(' ')}) — shown once, store it now:\n`);
          io.stdout.write(`${issued.key}\n`);
        }
      } catch (err) {
        if (isAppError(err) && err.status < 500) throw new CliError(err.message);
        throw err;
      } finally {
        await database.close();
      }
    });
  users
    .command('set-password')
    .summary("set an account's password and sign it out everywhere")
    .description(
      "Set an account's password (for a user who forgot theirs) and end all its web sessions. The password is prompted for on a terminal and read from stdin otherwise. API keys and connected apps keep working.",
    )
    .argument('<email>', 'the account email')
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users set-password alice@example.com
  $ echo "$NEW_PASSWORD" | docsearch users set-password alice@example.com --data-dir /var/lib/docsearch
`,
    )
    .action(async (email: string, flags: { dataDir?: string; database?: string }) => {
      const config = operatorConfig(io, 'users set-password', { 'data-dir': flags.dataDir, database: flags.database });
      const password = await readPassword(io, 'users set-password');
      const database = await openOperatorDatabase(config);
      try {
        const { db } = database;
        const now = systemClock;
        const accounts = new AccountService(new UserStore(db, now), new ProjectStore(db, now), new SetupTokenStore(db, now), new LoginAttemptStore(db, now));
        const user = await accounts.setPassword(email, password);
        const ended = await new SessionStore(db, now).deleteForUser(user.id);
        await operatorAudit(db, 'users set-password').record({ type: 'account.password_set', target: { type: 'account', id: user.id, label: user.email }, details: { sessions_ended: ended } });
        io.stderr.write(`set the password of ${user.email} (${user.id}); signed out ${ended} web session${ended === 1 ? '' : 's'}\n`);
      } catch (err) {
        if (isAppError(err) && err.status < 500) throw new CliError(err.message);
        throw err;
      } finally {
        await database.close();
      }
    });
  users.addCommand(resetTwoFactorCommand(io));
  return users;
}
