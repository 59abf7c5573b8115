import type { Context } from '../../context.js';
import { defineCommand } from '../shared/command.js';
import { groupsCommand } from './groups.js';
import { invitationsCommand } from './invitations.js';
import { mailCommand } from './mail.js';
import { usersCommand } from './users.js';

/**
 * `docsearch admin`: the admin API (`/api/v1/admin/…`) from any machine, with an admin's login or key. The same
 * actions as the Admin pages and the operator commands on the server machine (`docsearch users …`).
 */
export function adminCommand(ctx: Context) {
  const group = defineCommand('admin', {
    summary: 'run the library as an admin, from any machine: accounts, invitations, groups, mail',
    description:
      "Run the library as an admin from any machine, through the admin API with your login (or --token): accounts, invitations, groups and the mail outbox. Refused (403) unless the account is an admin. On the server machine, `docsearch users …` and `docsearch groups …` do the same without a login.",
    examples: ['docsearch admin users --server https://docs.example.com', 'docsearch admin users invite bob@example.com', 'docsearch admin mail'],
  });
  for (const c of [usersCommand(ctx), invitationsCommand(ctx), groupsCommand(ctx), mailCommand(ctx)]) group.addCommand(c);
  return group;
}
