import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as list from './list.js';
import * as purge from './purge.js';
import * as restore from './restore.js';

/** `docsearch trash`: wiring only; `list` runs when no verb is given. */
export function trashCommand(ctx: Context) {
  const group = defineCommand('trash', {
    summary: 'list, restore and purge deleted documents',
    examples: ['docsearch trash', 'docsearch trash restore doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch trash purge report.pdf --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [restore, purge]) group.addCommand(c.build(ctx));
  return group;
}
