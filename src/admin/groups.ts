import { Command } from 'commander';
import { toIso } from '../core/clock.js';
import { groupDeletionConsequence } from '../core/group-reach.js';
import { confirmDestructive } from '../terminal/confirm.js';
import { type IO, writeJson } from '../terminal/io.js';
import { type LibraryFlags, libraryOptions } from './library-options.js';
import { examples, printRows, withTeamAdmin } from './operator-team.js';
import { wantsJson } from './json-flag.js';

/**
 * `docsearch groups`: groups of accounts, straight in the library's database (what Admin → Groups does). Sharing a
 * project with a group gives everyone in it that role; joining or leaving applies at the next request everywhere.
 */
export function groupsCommand(io: IO): Command {
  const groups = new Command('groups')
    .summary('manage groups of accounts on this machine (operators)')
    .description(
      'Manage groups of accounts in a data directory, or in the PostgreSQL database of a shared-mode library. Share a project with `group:NAME` to give everyone in the group a role on it. Runs on the server machine; needs no running daemon.',
    );

  libraryOptions(groups.command('list').summary('list the groups').option('--json', 'print {groups: [...]} on stdout'))
    .description('List every group: name, members, where it comes from (local, or an identity provider), description.')
    .addHelpText('after', examples('docsearch groups list', 'docsearch groups list --json'))
    .action(async (flags: LibraryFlags, cmd: Command) =>
      withTeamAdmin(io, 'groups list', flags, async ({ team }) => {
        const all = await team.listGroups();
        if (wantsJson(cmd)) {
          return writeJson(io, {
            groups: all.map((g) => ({ id: g.id, name: g.name, description: g.description, source: g.source, member_count: g.memberCount, created_at: toIso(g.createdAt) })),
          });
        }
        printRows(io, ['ID', 'NAME', 'MEMBERS', 'SOURCE', 'DESCRIPTION'], all.map((g) => [g.id, g.name, String(g.memberCount), g.source, g.description]));
      }),
    );

  libraryOptions(
    groups
      .command('create')
      .summary('make a group')
      .description('Make a group. Names are unique (ignoring case), 1–100 characters, without ":" or "/". Prints its id on stdout.')
      .argument('<name>', 'the group name')
      .option('--description <text>', 'what the group is')
      .option('--json', 'print {group: {id, name, description}} on stdout and no notices on stderr'),
  )
    .addHelpText('after', examples('docsearch groups create legal --description "Legal team"'))
    .action(async (name: string, flags: LibraryFlags & { description?: string }, cmd: Command) =>
      withTeamAdmin(io, 'groups create', flags, async ({ team }) => {
        const group = await team.createGroup(name, flags.description);
        if (wantsJson(cmd)) return writeJson(io, { group: { id: group.id, name: group.name, description: group.description } });
        io.stderr.write(`created group ${group.name}\n`);
        io.stdout.write(`${group.id}\n`);
      }),
    );

  libraryOptions(
    groups
      .command('delete')
      .summary('delete a group')
      .description('Delete a group: its members lose what was shared with the group at once; what was shared with them directly stays. Asks first, naming its members and the projects shared with it (--yes does not).')
      .argument('<name>', 'the group name')
      .option('-y, --yes', 'do not ask for confirmation'),
  )
    .addHelpText('after', examples('docsearch groups delete contractors --yes'))
    .action(async (name: string, flags: LibraryFlags & { yes?: boolean }) =>
      withTeamAdmin(io, 'groups delete', flags, async ({ team }) => {
        const group = await team.group(name);
        await confirmDestructive(io, { action: `delete the group ${group.name}`, consequence: groupDeletionConsequence(await team.groupReach(group)) }, flags.yes);
        await team.deleteGroup(group);
        const who = group.memberCount === 0 ? 'it had no members' : `its ${group.memberCount === 1 ? 'member' : `${group.memberCount} members`} lost what was shared with it`;
        io.stderr.write(`deleted group ${group.name}; ${who}\n`);
      }),
    );

  libraryOptions(groups.command('members').summary("list a group's members").argument('<name>', 'the group name').option('--json', 'print {group, members: [...]} on stdout'))
    .description('List the members of a group, by e-mail.')
    .addHelpText('after', examples('docsearch groups members legal'))
    .action(async (name: string, flags: LibraryFlags, cmd: Command) =>
      withTeamAdmin(io, 'groups members', flags, async ({ team }) => {
        const group = await team.group(name);
        const members = await team.members(group);
        if (wantsJson(cmd)) return writeJson(io, { group: { id: group.id, name: group.name, source: group.source }, members });
        printRows(io, ['ID', 'EMAIL'], members.map((m) => [m.id, m.email]));
      }),
    );

  libraryOptions(groups.command('add').summary('add an account to a group').argument('<name>', 'the group name').argument('<email>', 'the account e-mail'))
    .description('Add an account to a group: it gets what is shared with the group at its next request.')
    .addHelpText('after', examples('docsearch groups add legal bob@example.com'))
    .action(async (name: string, email: string, flags: LibraryFlags) =>
      withTeamAdmin(io, 'groups add', flags, async ({ team }) => {
        const [group, user] = await Promise.all([team.group(name), team.user(email)]);
        const added = await team.addToGroup(group, user);
        io.stderr.write(added ? `added ${user.email} to ${group.name}\n` : `${user.email} was in ${group.name} already\n`);
      }),
    );

  libraryOptions(groups.command('remove').summary('take an account out of a group').argument('<name>', 'the group name').argument('<email>', 'the account e-mail'))
    .description('Take an account out of a group: it loses what is shared with the group at its next request; what it uploaded stays.')
    .addHelpText('after', examples('docsearch groups remove legal bob@example.com'))
    .action(async (name: string, email: string, flags: LibraryFlags) =>
      withTeamAdmin(io, 'groups remove', flags, async ({ team }) => {
        const [group, user] = await Promise.all([team.group(name), team.user(email)]);
        const removed = await team.removeFromGroup(group, user);
        io.stderr.write(removed ? `removed ${user.email} from ${group.name}\n` : `${user.email} was not in ${group.name}\n`);
      }),
    );
  return groups;
}
