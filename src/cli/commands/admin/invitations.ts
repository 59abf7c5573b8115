import type { Command } from 'commander';
import { INVITATION_LIST } from '../../api-types.js';
import type { Context } from '../../context.js';
import { lowerKey } from '../../../core/name-spellings.js';
import { CliError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';

export function invitationsCommand(ctx: Context): Command {
  const group = defineCommand('invitations', {
    summary: 'open invitations: list, revoke',
    examples: ['docsearch admin invitations', 'docsearch admin invitations revoke bob@example.com'],
  });
  addDefaultSubcommand(
    group,
    defineCommand('list', { summary: 'list open invitations, who made them and when they expire', examples: ['docsearch admin invitations list --json'] }).action(async () => {
      const { invitations } = await ctx.http().get('/api/v1/admin/invitations', { shape: INVITATION_LIST });
      if (ctx.globals().json) return emitJson(ctx, { invitations });
      printTable(ctx.io, {
        headers: ['ID', 'EMAIL', 'GIVES', 'MADE BY', 'MADE', 'EXPIRES'],
        rows: invitations.map((i) => [i.id, i.email, [i.admin ? 'admin' : null, i.group ? `group ${i.group}` : null].filter(Boolean).join(', ') || '-', i.created_by?.email ?? 'operator', { time: i.created_at }, { time: i.expires_at }]),
        now: ctx.now(),
      });
    }),
  );
  group.addCommand(
    defineCommand('revoke', { summary: 'revoke an open invitation: its link stops working', examples: ['docsearch admin invitations revoke bob@example.com', 'docsearch admin invitations revoke inv_0123456789abcdef'] })
      .argument('<invitation>', 'its id, or the address it is for')
      .action(async (ref: string) => {
        const http = ctx.http();
        let id = ref.trim();
        if (!id.startsWith('inv_')) {
          const { invitations } = await http.get('/api/v1/admin/invitations', { shape: INVITATION_LIST });
          const found = invitations.find((i) => lowerKey(i.email) === lowerKey(id));
          if (!found) throw new CliError(`no open invitation for ${id}`, undefined, 'see them with `docsearch admin invitations`');
          id = found.id;
        }
        await http.delete(`/api/v1/admin/invitations/${encodeURIComponent(id)}`);
        if (ctx.globals().json) return emitJson(ctx, { revoked: id });
        notice(ctx.io, `revoked invitation ${id} (${ref.trim()})`);
      }),
  );
  return group;
}
