/**
 * What `users add` and `users set-password` do once their arguments hold: an account and its password, written
 * straight into the library's database (safe beside running daemons: SQLite WAL, or PostgreSQL with --database).
 * Loaded only when one of them runs.
 */
import { AccountService } from '../auth/accounts.js';
import { ApiKeyService } from '../auth/api-keys.js';
import type { Scope } from '../auth/scopes.js';
import { systemClock, toIso } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import type { KeyExpiry } from '../core/key-expiry.js';
import type { Db } from '../store/sql/database.js';
import { ApiKeyStore } from '../store/sql/api-keys.js';
import { LoginAttemptStore } from '../store/sql/login-attempts.js';
import { ProjectStore } from '../store/sql/projects.js';
import { SessionStore } from '../store/sql/sessions.js';
import { SetupTokenStore } from '../store/sql/setup-tokens.js';
import { UserStore } from '../store/sql/users.js';
import { CliError, UsageError } from '../terminal/errors.js';
import { canPrompt, type IO, readStdin, writeJson } from '../terminal/io.js';
import type { LibraryFlags } from './library-options.js';
import { operatorAudit } from './operator-audit.js';
import { openOperatorDatabase, operatorConfig } from './operator-database.js';

async function readPassword(io: IO, command: string): Promise<string> {
  if (canPrompt(io)) {
    // Only a terminal is asked: the prompts library loads for it alone, not for a password piped by a script.
    const { password: promptPassword } = await import('@inquirer/prompts');
    const first = await promptPassword({ message: 'Password:', mask: true }, { input: io.stdin, output: io.stderr });
    const again = await promptPassword({ message: 'Repeat password:', mask: true }, { input: io.stdin, output: io.stderr });
    if (first !== again) throw new CliError('the passwords do not match');
    return first;
  }
  if (io.stdin.isTTY) throw new UsageError('cannot prompt for a password here', `pipe it on stdin: echo "$PASSWORD" | docsearch ${command} <email>`);
  const text = (await readStdin(io)).replace(/\r?\n$/, '');
  // Nothing piped (a script's empty variable, stdin at /dev/null) is a mistake in the call, not a short password.
  if (text === '') throw new UsageError('no password on stdin', `pipe it: echo "$PASSWORD" | docsearch ${command} <email>; or run it on a terminal to be asked`);
  return text;
}

const accountService = (db: Db) =>
  new AccountService(new UserStore(db, systemClock), new ProjectStore(db, systemClock), new SetupTokenStore(db, systemClock), new LoginAttemptStore(db, systemClock));

/** The API key `users add --api-key` makes with the account. */
export interface ProvisionedKey {
  scopes: Scope[];
  expires: KeyExpiry;
  name: string;
}

/** `users add`: the account, and with `key` an API key for it, printed once. */
export async function addUser(io: IO, email: string, flags: LibraryFlags, key: ProvisionedKey | null, json: boolean): Promise<void> {
  const config = operatorConfig(io, 'users add', { 'data-dir': flags.dataDir, database: flags.database });
  const password = await readPassword(io, 'users add');
  const database = await openOperatorDatabase(config, { init: flags.init });
  try {
    const { db } = database;
    const now = systemClock;
    const accounts = accountService(db);
    const audit = operatorAudit(db, 'users add');
    const keys = new ApiKeyService(new ApiKeyStore(db, now), now, audit);
    // A past or too distant expiry is refused before the account is made, not after.
    if (key) keys.expiresAtFor(key.expires);
    const user = await accounts.createUser(email, password);
    await audit.record({ type: 'account.created', target: { type: 'account', id: user.id, label: user.email }, details: { how: 'docsearch users add' } });
    const issued = key ? await keys.issue(user.id, key.name, { scopes: key.scopes, expires: key.expires }) : null;
    if (json) {
      const apiKey = issued && { id: issued.record.id, name: issued.record.name, scopes: issued.record.scopes, expires_at: issued.record.expiresAt === null ? null : toIso(issued.record.expiresAt), key: issued.key };
      return writeJson(io, { user: { id: user.id, email: user.email }, api_key: apiKey });
    }
    io.stderr.write(`created account ${user.email} (${user.id}) in ${database.shared ? database.location : config.dataDir}\n`);
    if (issued) {
      const until = issued.record.expiresAt === null ? '' : `, expires ${toIso(issued.record.expiresAt)}`;
      io.stderr.write(`API key (${key!.scopes.join(' ')}${until}) — shown once, store it now:\n`);
      io.stdout.write(`${issued.key}\n`);
    }
  } catch (err) {
    if (isAppError(err) && err.status < 500) throw new CliError(err.message);
    throw err;
  } finally {
    await database.close();
  }
}

/** `users set-password`: the new password, and every web session of the account ended. */
export async function setPassword(io: IO, email: string, flags: LibraryFlags): Promise<void> {
  const config = operatorConfig(io, 'users set-password', { 'data-dir': flags.dataDir, database: flags.database });
  const password = await readPassword(io, 'users set-password');
  const database = await openOperatorDatabase(config, { init: flags.init });
  try {
    const { db } = database;
    const user = await accountService(db).setPassword(email, password);
    const ended = await new SessionStore(db, systemClock).deleteForUser(user.id);
    await operatorAudit(db, 'users set-password').record({ type: 'account.password_set', target: { type: 'account', id: user.id, label: user.email }, details: { sessions_ended: ended } });
    io.stderr.write(`set the password of ${user.email} (${user.id}); signed out ${ended} web session${ended === 1 ? '' : 's'}\n`);
  } catch (err) {
    if (isAppError(err) && err.status < 500) throw new CliError(err.message);
    throw err;
  } finally {
    await database.close();
  }
}
