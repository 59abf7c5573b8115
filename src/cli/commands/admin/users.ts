import type { Command } from 'commander';
import { ADMIN_USER, ADMIN_USER_LIST, type AdminUser, ISSUED_LINK, type IssuedLink } from '../../api-types.js';
import type { Context } from '../../context.js';
import { DISABLE_CONSEQUENCE } from '../../../core/account-disable.js';
import { formatBytes, parseByteSize } from '../../../core/bytes.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { CliError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { shape } from '../../wire-shape.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';

const DISABLED_USER = shape<{ user: AdminUser; sessions_ended: number; keys_revoked: number; grants_revoked: number }>({
  user: ADMIN_USER.fields,
  sessions_ended: 'number',
  keys_revoked: 'number',
  grants_revoked: 'number',
});
const ENABLED_USER = shape<{ user: AdminUser }>({ user: ADMIN_USER.fields });
const DELETED_USER = shape<{ transferred: number; removed: number }>({ transferred: 'number', removed: 'number' });
const INVITED = shape<{ invitations: (IssuedLink & { email: string; id: string })[]; refused: { email: string; error: string }[] }>({
  invitations: [{ ...ISSUED_LINK.fields, email: 'string', id: 'string' }],
  refused: [{ email: 'string', error: 'string' }],
});

/** An account in a path: its id or its e-mail, as the admin API takes it. */
export const userPath = (ref: string): string => `/api/v1/admin/users/${encodeURIComponent(ref.trim())}`;

const twoFactor = (u: AdminUser): string => [u.two_factor.totp ? 'app' : null, u.two_factor.passkeys > 0 ? `${u.two_factor.passkeys} passkey${u.two_factor.passkeys === 1 ? '' : 's'}` : null].filter(Boolean).join(', ') || 'none';

async function list(ctx: Context): Promise<void> {
  const { users } = await ctx.http().get('/api/v1/admin/users', { shape: ADMIN_USER_LIST });
  if (ctx.globals().json) return emitJson(ctx, { users });
  printTable(ctx.io, {
    headers: ['EMAIL', 'ADMIN', 'KIND', '2FA', 'LAST SIGN-IN', 'DOCUMENTS', 'SIZE', 'QUOTA', 'DISABLED'],
    rows: users.map((u) => [
      u.email,
      u.admin ? 'yes' : 'no',
      u.kind,
      twoFactor(u),
      { time: u.last_sign_in_at, said: u.last_sign_in_at ? undefined : 'never' },
      u.usage.documents,
      { bytes: u.usage.bytes },
      u.quota.limit_bytes === null ? 'none' : { bytes: u.quota.limit_bytes },
      u.disabled ? { time: u.disabled_at } : 'no',
    ]),
    now: ctx.now(),
  });
}

/** A link shown once on stdout (for a pipe), or that it was mailed. */
function showLink(ctx: Context, what: string, issued: IssuedLink): void {
  if (issued.link) {
    notice(ctx.io, `${what}: send them this link; it works once, until ${issued.expires_at}, and is not shown again`);
    ctx.io.stdout.write(`${issued.link}\n`);
  } else notice(ctx.io, `${what}: mailed (it works once, until ${issued.expires_at})`);
}

async function invite(ctx: Context, emails: string[], flags: { admin?: boolean; group?: string; mail: boolean }): Promise<void> {
  const addresses = emails.flatMap((e) => e.split(/[\s,;]+/)).filter(Boolean);
  const body = { emails: addresses, admin: Boolean(flags.admin), send: flags.mail, ...(flags.group ? { group: flags.group } : {}) };
  const res = await ctx.http().post('/api/v1/admin/invitations', body, { shape: INVITED });
  if (ctx.globals().json) await emitJson(ctx, res);
  else {
    for (const i of res.invitations) showLink(ctx, `invited ${i.email}`, i);
    for (const r of res.refused) ctx.io.stderr.write(`not invited ${r.email}: ${r.error}\n`);
  }
  // Exit 1 whenever an address was refused, --json or not: a script sees it without parsing `refused`.
  if (res.refused.length > 0) throw new CliError(`${res.refused.length} of ${addresses.length} address${addresses.length === 1 ? '' : 'es'} not invited`);
}

export function usersCommand(ctx: Context): Command {
  const group = defineCommand('users', {
    summary: 'accounts: list, invite, disable, enable, delete, reset links, admins',
    examples: ['docsearch admin users', 'docsearch admin users invite bob@example.com carol@example.com --group editors', 'docsearch admin users disable bob@example.com'],
  });
  addDefaultSubcommand(
    group,
    defineCommand('list', {
      summary: 'list every account: admin, local or provider, second factors, last sign-in, what its uploads hold',
      examples: ['docsearch admin users list', 'docsearch admin users list --json'],
    }).action(() => list(ctx)),
  );
  group.addCommand(
    defineCommand('invite', {
      summary: 'invite people: a one-time link each (mailed when the server sends mail), valid 7 days',
      description:
        'Invite one or more people (addresses as arguments, or separated by commas or spaces). Each gets a one-time link, valid 7 days, that makes their account; with --group they join that local group, with --admin they are admins. When the server sends mail (--smtp-url) the links are mailed; otherwise (or with --no-mail) they are printed on stdout, once. Exits 1 when any address was refused (an account has it, not an address), after inviting the rest.',
      examples: ['docsearch admin users invite bob@example.com', 'docsearch admin users invite "a@example.com, b@example.com" --group editors', 'docsearch admin users invite ops@example.com --admin --no-mail'],
    })
      .argument('<emails...>', 'the addresses')
      .option('--admin', 'make the accounts admins')
      .option('--group <name>', 'a local group the accounts join')
      .option('--no-mail', 'print the links instead of mailing them')
      .action((emails: string[], flags: { admin?: boolean; group?: string; mail: boolean }) => invite(ctx, emails, flags)),
  );
  group.addCommand(
    defineCommand('disable', {
      summary: 'stop an account signing in, ending its sessions, keys and connected apps at once',
      description: `Stop an account signing in. ${DISABLE_CONSEQUENCE} Asks first on a terminal; elsewhere --yes is required.`,
      examples: ['docsearch admin users disable bob@example.com', 'docsearch admin users disable bob@example.com --yes'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .option('-y, --yes', 'do not ask for confirmation')
      .action(async (user: string, flags: { yes?: boolean }) => {
        await confirmDestructive(ctx.io, { action: `disable the account ${user}`, consequence: DISABLE_CONSEQUENCE }, flags.yes);
        const res = await ctx.http().post(`${userPath(user)}/disable`, undefined, { shape: DISABLED_USER });
        if (ctx.globals().json) return emitJson(ctx, res);
        notice(ctx.io, `disabled ${res.user.email}; ended ${res.sessions_ended} web session(s), revoked ${res.keys_revoked} API key(s) and ${res.grants_revoked} connected app(s)`);
      }),
  );
  group.addCommand(
    defineCommand('enable', {
      summary: 'let a disabled account sign in again',
      description: 'Let a disabled account sign in again. Its API keys and connected apps were revoked when it was disabled and stay revoked: it makes new ones.',
      examples: ['docsearch admin users enable bob@example.com'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .action(async (user: string) => {
        const res = await ctx.http().post(`${userPath(user)}/enable`, undefined, { shape: ENABLED_USER });
        if (ctx.globals().json) return emitJson(ctx, res);
        notice(ctx.io, `enabled ${res.user.email}: they can sign in again; the API keys and connected apps revoked when it was disabled stay revoked (they make new ones)`);
      }),
  );
  group.addCommand(
    defineCommand('delete', {
      summary: 'delete an account, handing its projects to another',
      description:
        "Delete an account; it is signed out everywhere. Its projects that hold anything go to --transfer-to; without it the delete is refused while there are such projects. What it uploaded into other people's projects stays. Asks first on a terminal; elsewhere --yes is required.",
      examples: ['docsearch admin users delete bob@example.com --transfer-to alice@example.com', 'docsearch admin users delete temp@example.com --yes'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .option('--transfer-to <user>', 'the account that gets its projects')
      .option('-y, --yes', 'do not ask for confirmation')
      .action(async (user: string, flags: { transferTo?: string; yes?: boolean }) => {
        await confirmDestructive(ctx.io, { action: `delete the account ${user}${flags.transferTo ? ` and hand its projects to ${flags.transferTo}` : ''}`, consequence: 'This cannot be undone.' }, flags.yes);
        const query = flags.transferTo ? `?transfer_to=${encodeURIComponent(flags.transferTo)}` : '';
        const res = await ctx.http().delete(`${userPath(user)}${query}`, { shape: DELETED_USER });
        if (ctx.globals().json) return emitJson(ctx, res);
        notice(ctx.io, `deleted ${user}; ${res.transferred} project(s) handed on, ${res.removed} empty project(s) deleted`);
      }),
  );
  group.addCommand(
    defineCommand('reset-link', {
      summary: 'a one-time link that sets a new password (mailed when the server sends mail)',
      description:
        'Make a one-time link, valid 24 hours, that sets a new password for the account and signs it out everywhere. When the server sends mail it is mailed to the account; otherwise (or with --no-mail) it is printed on stdout, once, for you to hand over.',
      examples: ['docsearch admin users reset-link bob@example.com', 'docsearch admin users reset-link bob@example.com --no-mail'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .option('--no-mail', 'print the link instead of mailing it')
      .action(async (user: string, flags: { mail: boolean }) => {
        const res = await ctx.http().post(`${userPath(user)}/reset-link`, { send: flags.mail }, { shape: ISSUED_LINK });
        if (ctx.globals().json) return emitJson(ctx, res);
        showLink(ctx, `reset link for ${user}`, res);
      }),
  );
  group.addCommand(
    defineCommand('set-quota', {
      summary: 'give an account a quota of its own (500MiB, 2GB), or (--default) the server default again',
      description:
        "The most the live documents the account uploaded may hold (docs/operations.md#quotas). Past it an upload is refused, naming the quota, and the account's sources pause. --default drops the account's own quota, so --quota-default applies again.",
      examples: ['docsearch admin users set-quota alice@example.com 10GiB', 'docsearch admin users set-quota alice@example.com --default'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .argument('[size]', 'the quota: 500MiB, 2GB (a bare number is MiB)')
      .option('--default', 'drop its own quota: the server default applies')
      .action(async (user: string, size: string | undefined, flags: { default?: boolean }) => {
        const bytes = flags.default ? null : size === undefined ? undefined : parseByteSize(size);
        if (bytes === undefined || (bytes === null && !flags.default)) throw new CliError(size === undefined ? 'give a size (500MiB, 2GB) or --default' : `"${size}" is not a size such as 500MiB or 2GB`);
        const res = await ctx.http().patch(userPath(user), { quota_bytes: bytes }, { shape: ADMIN_USER });
        if (ctx.globals().json) return emitJson(ctx, res);
        const limit = res.quota.limit_bytes === null ? 'no quota' : `a quota of ${formatBytes(res.quota.limit_bytes)}`;
        notice(ctx.io, `${res.email} has ${limit}${res.quota.own ? '' : ' (the server default)'}; its uploads hold ${formatBytes(res.usage.bytes)}`);
      }),
  );
  group.addCommand(
    defineCommand('set-admin', {
      summary: 'make an account an admin, or (--off) not',
      examples: ['docsearch admin users set-admin alice@example.com', 'docsearch admin users set-admin bob@example.com --off'],
    })
      .argument('<user>', 'the account: e-mail or id')
      .option('--off', 'take admin away instead')
      .action(async (user: string, flags: { off?: boolean }) => {
        const res = await ctx.http().patch(userPath(user), { admin: !flags.off }, { shape: ADMIN_USER });
        if (ctx.globals().json) return emitJson(ctx, res);
        notice(ctx.io, res.admin ? `${res.email} is now an admin` : `${res.email} is no longer an admin`);
      }),
  );
  return group;
}
