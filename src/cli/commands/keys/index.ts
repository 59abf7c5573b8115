import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as create from './create.js';
import * as list from './list.js';
import * as revoke from './revoke.js';

/** `docsearch keys`: wiring only; `list` runs when no verb is given. */
export function keysCommand(ctx: Context) {
  const group = defineCommand('keys', {
    summary: 'list, create and revoke API keys',
    examples: ['docsearch keys', 'docsearch keys create --name ci', 'docsearch keys revoke ci --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [create, revoke]) group.addCommand(c.build(ctx));
  return group;
}
