import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as status from './status.js';

/** `docsearch auth`: wiring only (gh's `auth status`); `status` runs when no verb is given. */
export function authCommand(ctx: Context) {
  const group = defineCommand('auth', {
    summary: 'show every saved login and whether it still works',
    examples: ['docsearch auth status', 'docsearch auth'],
  });
  addDefaultSubcommand(group, status.build(ctx));
  return group;
}
