import type { Command } from 'commander';
import { ADMIN_GROUP, ADMIN_GROUP_LIST, type AdminGroup } from '../../api-types.js';
import type { Context } from '../../context.js';
import { groupDeletionConsequence } from '../../../core/group-reach.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { shape } from '../../wire-shape.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';

const GROUP_TO_DELETE = shape<AdminGroup & { project_count: number }>({ ...ADMIN_GROUP.fields, project_count: 'number' });
const GROUP_MEMBERS = shape<AdminGroup & { members: { id: string; email: string }[] }>({ ...ADMIN_GROUP.fields, members: [{ id: 'string', email: 'string' }] });

const groupPath = (ref: string): string => `/api/v1/admin/groups/${encodeURIComponent(ref.trim())}`;

export function groupsCommand(ctx: Context): Command {
  const group = defineCommand('groups', {
    summary: 'groups: list, create, delete, members, add, remove',
    examples: ['docsearch admin groups', 'docsearch admin groups create editors', 'docsearch admin groups add editors bob@example.com'],
  });
  addDefaultSubcommand(
    group,
    defineCommand('list', { summary: 'list every group, local and from the identity provider', examples: ['docsearch admin groups list'] }).action(async () => {
      const { groups } = await ctx.http().get('/api/v1/admin/groups', { shape: ADMIN_GROUP_LIST });
      if (ctx.globals().json) return emitJson(ctx, { groups });
      printTable(ctx.io, { headers: ['NAME', 'MEMBERS', 'SOURCE', 'DESCRIPTION'], rows: groups.map((g) => [g.name, g.member_count, g.source, g.description]), now: ctx.now() });
    }),
  );
  group.addCommand(
    defineCommand('create', { summary: 'make a local group', examples: ['docsearch admin groups create editors --description "They edit the handbook"'] })
      .argument('<name>', 'the group’s name')
      .option('--description <text>', 'what it is for', '')
      .action(async (name: string, flags: { description: string }) => {
        const made = await ctx.http().post('/api/v1/admin/groups', { name, description: flags.description }, { shape: ADMIN_GROUP });
        if (ctx.globals().json) return emitJson(ctx, made);
        notice(ctx.io, `created group ${made.name}`);
      }),
  );
  group.addCommand(
    defineCommand('delete', { summary: 'delete a local group (its members lose what it was given)', examples: ['docsearch admin groups delete editors --yes'] })
      .argument('<group>', 'its name or id')
      .option('-y, --yes', 'do not ask for confirmation')
      .action(async (name: string, flags: { yes?: boolean }) => {
        if (!flags.yes) {
          const got = await ctx.http().get(groupPath(name), { shape: GROUP_TO_DELETE });
          await confirmDestructive(ctx.io, { action: `delete the group ${got.name}`, consequence: groupDeletionConsequence({ members: got.member_count, projects: got.project_count }) }, flags.yes);
        }
        await ctx.http().delete(groupPath(name));
        if (ctx.globals().json) return emitJson(ctx, { deleted: name });
        notice(ctx.io, `deleted group ${name}`);
      }),
  );
  group.addCommand(
    defineCommand('members', { summary: "list a group's members", examples: ['docsearch admin groups members editors'] })
      .argument('<group>', 'its name or id')
      .action(async (name: string) => {
        const got = await ctx.http().get(groupPath(name), { shape: GROUP_MEMBERS });
        if (ctx.globals().json) return emitJson(ctx, got);
        printTable(ctx.io, { headers: ['ID', 'EMAIL'], rows: got.members.map((m) => [m.id, m.email]), now: ctx.now() });
      }),
  );
  for (const [verb, summary] of [
    ['add', 'add an account to a local group'],
    ['remove', 'take an account out of a local group'],
  ] as const) {
    group.addCommand(
      defineCommand(verb, { summary, examples: [`docsearch admin groups ${verb} editors bob@example.com`] })
        .argument('<group>', 'its name or id')
        .argument('<user>', 'the account: e-mail or id')
        .action(async (name: string, user: string) => {
          if (verb === 'add') await ctx.http().post(`${groupPath(name)}/members`, { user });
          else await ctx.http().delete(`${groupPath(name)}/members/${encodeURIComponent(user)}`);
          if (ctx.globals().json) return emitJson(ctx, { group: name, user, [verb === 'add' ? 'added' : 'removed']: true });
          notice(ctx.io, verb === 'add' ? `added ${user} to ${name}` : `removed ${user} from ${name}`);
        }),
    );
  }
  return group;
}
