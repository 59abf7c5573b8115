import { Command, Option } from 'commander';
import { parseScopes, SCOPES } from '../auth/scopes.js';
import { DISABLE_CONSEQUENCE } from '../core/account-disable.js';
import { toIso } from '../core/clock.js';
import { EXPIRES_FORMS, type KeyExpiry, parseExpires } from '../core/key-expiry.js';
import { UsageError } from '../terminal/errors.js';
import { type IO, writeJson } from '../terminal/io.js';
import { confirmDestructive } from '../terminal/confirm.js';
import type { ServeConfig } from '../server/config.js';
import { databaseOption, initOption, type LibraryFlags, libraryOptions } from './library-options.js';
import { count, examples, printRows, withTeamAdmin } from './operator-team.js';
import { wantsJson } from './json-flag.js';

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
    .addOption(initOption())
    .option('--api-key', 'also create an API key for the account and print it (once) on stdout')
    .addOption(new Option('--scopes <scopes>', `scopes of that key, comma or space separated (${SCOPES.join(', ')})`).default(SCOPES.join(',')))
    .option('--key-name <name>', 'name of that key', 'provisioned')
    .addOption(new Option('--key-expires <when>', `when that key expires: ${EXPIRES_FORMS}`).default('never'))
    .option('--json', 'print {user, api_key} on stdout (api_key null without --api-key) and no notices on stderr')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users add alice@example.com
  $ echo "$CI_PASSWORD" | docsearch users add ci@example.com --api-key --scopes write:documents,read:documents
  $ echo "$CI_PASSWORD" | docsearch users add ci@example.com --api-key --key-expires 90d
  $ echo "$CI_PASSWORD" | docsearch users add ci@example.com --api-key --json | jq -r .api_key.key
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db.internal/docsearch docsearch users add bob@example.com
`,
    )
    .action(async (email: string, flags: LibraryFlags & { apiKey?: boolean; scopes: string; keyName: string; keyExpires: string }, cmd: Command) => {
      const json = wantsJson(cmd);
      const { scopes, unknown } = parseScopes(flags.scopes);
      if (unknown.length > 0 || scopes.length === 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`, `valid scopes: ${SCOPES.join(', ')}`);
      let expires: KeyExpiry;
      try {
        expires = parseExpires(flags.keyExpires);
      } catch (err) {
        throw new UsageError(`--key-expires: ${(err as Error).message}`);
      }
      const { addUser } = await import('./users-passwords.js');
      await addUser(io, email, flags, flags.apiKey ? { scopes, expires, name: flags.keyName } : null, json);
    });
  libraryOptions(
    users
      .command('set-password')
      .summary("set an account's password and sign it out everywhere")
      .description(
        "Set an account's password (for a user who forgot theirs) and end all its web sessions. The password is prompted for on a terminal and read from stdin otherwise. API keys and connected apps keep working.",
      )
      .argument('<email>', 'the account email')
  )
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users set-password alice@example.com
  $ echo "$NEW_PASSWORD" | docsearch users set-password alice@example.com --data-dir /var/lib/docsearch
`,
    )
    .action(async (email: string, flags: LibraryFlags) => (await import('./users-passwords.js')).setPassword(io, email, flags));
  addOffboardingCommands(users, io);
  users.addCommand(resetTwoFactorCommand(io));
  return users;
}

/**
 * `docsearch users reset-2fa <email>`: for someone who lost their authenticator app, their passkeys and their
 * recovery codes. Removes every second factor of the account and ends its web sessions; its password alone signs it
 * in again, and `--require-2fa` sends it to set one up at once. `--all` does it to every account, for a library
 * whose secrets key is lost (it also forgets which key that was).
 */
function resetTwoFactorCommand(io: IO): Command {
  return libraryOptions(
    new Command('reset-2fa')
      .summary("remove an account's second factors (authenticator app, recovery codes, passkeys)")
      .description(
        "Remove every second factor of an account (its authenticator app, recovery codes and passkeys) and end its web sessions, for someone who lost them: the password alone signs the account in again until it sets one up (at once where --require-2fa asks for one). API keys and connected apps keep working. With --all instead of an e-mail, every account's, for a library whose secrets key is lost. Asks first on a terminal; elsewhere --yes is required.",
      )
      .argument('[email]', 'the account email')
      .option('--all', "every account's second factors (and the record of the secrets key they were sealed with)")
      .option('-y, --yes', 'do not ask for confirmation')
  )
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch users reset-2fa alice@example.com
  $ docsearch users reset-2fa --all --data-dir /var/lib/docsearch --yes
`,
    )
    .action(async (email: string | undefined, flags: LibraryFlags & { all?: boolean; yes?: boolean }) => {
      if (!!email === !!flags.all) throw new UsageError('name one account by its e-mail, or give --all', 'docsearch users reset-2fa <email>');
      await (await import('./users-two-factor.js')).resetTwoFactor(io, email, flags);
    });
}


/** `users list|invite|disable|enable|delete|set-admin`: what an admin does on the Admin pages, from the server machine. */
function addOffboardingCommands(users: Command, io: IO): void {
  libraryOptions(
    users
      .command('list')
      .summary('list the accounts')
      .description('List every account: e-mail, admin, disabled, created. Tab-separated through a pipe; --json for scripts.')
      .option('--json', 'print {users: [...]} on stdout'),
  )
    .addHelpText('after', examples('docsearch users list', 'docsearch users list --json --data-dir /var/lib/docsearch'))
    .action(async (flags: LibraryFlags, cmd: Command) =>
      withTeamAdmin(io, 'users list', flags, async ({ team }) => {
        const all = await team.listUsers();
        if (wantsJson(cmd)) {
          return writeJson(io, {
            users: all.map((u) => ({ id: u.id, email: u.email, admin: u.isAdmin, admin_from: u.adminManagedBy, disabled: u.disabledAt !== null, disabled_at: u.disabledAt === null ? null : toIso(u.disabledAt), created_at: toIso(u.createdAt) })),
          });
        }
        printRows(
          io,
          ['ID', 'EMAIL', 'ADMIN', 'DISABLED', 'CREATED'],
          all.map((u) => [u.id, u.email, `${u.isAdmin ? 'yes' : 'no'}${u.adminManagedBy ? ` (from ${u.adminManagedBy})` : ''}`, u.disabledAt === null ? 'no' : toIso(u.disabledAt), toIso(u.createdAt)]),
        );
      }),
    );

  libraryOptions(
    users
      .command('invite')
      .summary('make a one-time link for a new account')
      .description(
        "Make an invitation: a link that works once, for 7 days, where the person chooses a password and is signed in. Prints the link on stdout (it is shown only this once; only its hash is kept). The link starts with the server's public URL.",
      )
      .argument('<email>', 'the new account’s e-mail')
      .option('--public-url <url>', 'the URL people reach the server at (env DOCSEARCH_PUBLIC_URL; default: the configured one, else http://<host>:<port>)')
      .option('--json', 'print {email, url, expires_at} on stdout and no notices on stderr'),
  )
    .addHelpText('after', examples('docsearch users invite bob@example.com --public-url https://docs.example.com'))
    .action(async (email: string, flags: LibraryFlags & { publicUrl?: string }, cmd: Command) => {
      await withTeamAdmin(
        io,
        'users invite',
        flags,
        async ({ team, config }) => {
          const base = await invitationBase(io, config, flags.publicUrl);
          const { token, expiresAt } = await team.invite(email, null);
          const url = `${base}/invite?token=${token}`;
          if (wantsJson(cmd)) return writeJson(io, { email: email.trim(), url, expires_at: toIso(expiresAt) });
          io.stderr.write(`invited ${email.trim()}: send them this link; it works once, for 7 days, and is not shown again\n`);
          io.stdout.write(`${url}\n`);
        },
        { 'public-url': flags.publicUrl },
      );
    });

  libraryOptions(
    users
      .command('disable')
      .summary('stop an account signing in, and end what it has open')
      .description(
        `Disable an account: it can no longer sign in, and its web sessions, API keys and connected apps end at once, on every replica. ${DISABLE_CONSEQUENCE} Its projects and documents stay; enable it again with \`users enable\`. Asks first on a terminal; elsewhere --yes is required.`,
      )
      .argument('<email>', 'the account e-mail')
      .option('-y, --yes', 'do not ask for confirmation'),
  )
    .addHelpText('after', examples('docsearch users disable bob@example.com', 'docsearch users disable bob@example.com --yes'))
    .action(async (email: string, flags: LibraryFlags & { yes?: boolean }) =>
      withTeamAdmin(io, 'users disable', flags, async ({ team }) => {
        const user = await team.user(email);
        await confirmDestructive(io, { action: `disable the account ${user.email}`, consequence: DISABLE_CONSEQUENCE }, flags.yes);
        const ended = await team.disable(user);
        const { endedSummary } = await import('../access/team-admin.js'); // here, not above: --help loads no account code
        io.stderr.write(`disabled ${user.email}; ${endedSummary(ended)}\n`);
      }),
    );

  libraryOptions(users.command('enable').summary('let a disabled account sign in again').argument('<email>', 'the account e-mail'))
    .description('Enable a disabled account: it can sign in again. What disabling ended (sessions, API keys, connected apps) stays ended.')
    .addHelpText('after', examples('docsearch users enable bob@example.com'))
    .action(async (email: string, flags: LibraryFlags) =>
      withTeamAdmin(io, 'users enable', flags, async ({ team }) => {
        const user = await team.user(email);
        await team.enable(user);
        io.stderr.write(`enabled ${user.email}: they can sign in again\n`);
      }),
    );

  libraryOptions(
    users
      .command('delete')
      .summary('delete an account, handing its projects to another')
      .description(
        "Delete an account. It is signed out everywhere (web sessions, API keys, connected apps end at once). Its projects go to --transfer-to, documents and all; without it, the delete is refused while any of them holds documents, in its trash too, or is shared (empty ones are deleted). What it uploaded into other people's projects stays there. Asks first on a terminal; elsewhere --yes is required.",
      )
      .argument('<email>', 'the account e-mail')
      .option('--transfer-to <email>', 'the account that gets its projects')
      .option('-y, --yes', 'do not ask for confirmation'),
  )
    .addHelpText('after', examples('docsearch users delete bob@example.com --transfer-to alice@example.com', 'docsearch users delete temp@example.com --yes'))
    .action(async (email: string, flags: LibraryFlags & { transferTo?: string; yes?: boolean }) => {
      const { transferTo, yes } = flags;
      await withTeamAdmin(io, 'users delete', flags, async ({ team }) => {
        const user = await team.user(email);
        const to = transferTo ? await team.user(transferTo) : undefined;
        const handed = await team.projectsToHandOver(user);
        const hand = to && handed.length > 0 ? ` and hand its ${count(handed.length, 'project')} to ${to.email}` : '';
        await confirmDestructive(io, { action: `delete the account ${user.email}${hand}`, consequence: 'This cannot be undone.' }, yes);
        const done = await team.delete(user, to);
        const { endedSummary } = await import('../access/team-admin.js'); // here, not above: --help loads no account code
        const moved = to && done.transferred > 0 ? `; ${count(done.transferred, 'project')} now ${done.transferred === 1 ? 'belongs' : 'belong'} to ${to.email}` : '';
        const removed = done.removed > 0 ? `; deleted ${count(done.removed, 'empty project')}` : '';
        io.stderr.write(`deleted ${user.email}${moved}${removed}; ${endedSummary(done)}\n`);
      });
    });

  libraryOptions(
    users
      .command('allow-sso-link')
      .summary("let the identity provider's next sign-in with this e-mail take the account over")
      .description(
        "Let the OpenID Connect provider's next sign-in with this account's e-mail (verified there) link to this local account, as --sso-link-accounts does for every account: the person then signs in through the provider to the account they have, with its projects, password and second factors.",
      )
      .argument('<email>', 'the account e-mail'),
  )
    .addHelpText('after', examples('docsearch users allow-sso-link alice@example.com'))
    .action(async (email: string, flags: LibraryFlags) => {
      await withTeamAdmin(io, 'users allow-sso-link', flags, async ({ team }) => {
        const user = await team.user(email);
        await team.allowProviderLink(user);
        io.stderr.write(`${user.email}: the identity provider's next sign-in with this e-mail (verified there) links to this account\n`);
      });
    });

  libraryOptions(
    users
      .command('set-admin')
      .summary('make an account an admin, or (--off) not')
      .description('Make an account an administrator (the Admin pages: users, groups, the sharing policy), or with --off take that away. The last active admin stays one.')
      .argument('<email>', 'the account e-mail')
      .option('--off', 'take admin away instead'),
  )
    .addHelpText('after', examples('docsearch users set-admin alice@example.com', 'docsearch users set-admin bob@example.com --off'))
    .action(async (email: string, flags: LibraryFlags & { off?: boolean }) => {
      await withTeamAdmin(io, 'users set-admin', flags, async ({ team }) => {
        const user = await team.user(email);
        await team.setAdmin(user, !flags.off);
        io.stderr.write(flags.off ? `${user.email} is no longer an admin\n` : `${user.email} is now an admin\n`);
      });
    });
}

/**
 * Where an invitation link points, so that it works: the --public-url given here; else the URL of the daemon running
 * on this data directory (it holds the directory's lock and recorded its public URL at start, whatever port or
 * --public-url it was started with); else the public URL the environment or config file sets; else what `serve`
 * would listen at with these settings, with a warning that no daemon runs there now.
 */
async function invitationBase(io: IO, config: ServeConfig, explicit: string | undefined): Promise<string> {
  if (explicit) return explicit.replace(/\/+$/, '');
  const { runningDaemonUrl } = await import('../server/data-dir-lock.js');
  const running = runningDaemonUrl(config.dataDir);
  if (running) return running.replace(/\/+$/, '');
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  if (config.port === 0) throw new UsageError('no public URL is configured and the port is 0', 'pass --public-url https://… (or set DOCSEARCH_PUBLIC_URL)');
  const host = config.host === '0.0.0.0' || config.host === '[::]' ? '127.0.0.1' : config.host;
  const base = `http://${host}:${config.port}`;
  io.stderr.write(`warning: no daemon is running on ${config.dataDir}, so this link assumes one will listen at ${base}; pass --public-url to say where people reach it\n`);
  return base;
}
