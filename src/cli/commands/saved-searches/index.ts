import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as del from './delete.js';
import * as list from './list.js';
import * as rename from './rename.js';

/** `docsearch saved-searches`: wiring only; `list` runs when no verb is given. */
export function savedSearchesCommand(ctx: Context) {
  const group = defineCommand('saved-searches', {
    summary: 'list, rename and delete saved searches (run one with `search --saved NAME`)',
    examples: ['docsearch saved-searches', 'docsearch saved-searches rename weekly "weekly invoices"', 'docsearch saved-searches delete weekly --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [rename, del]) group.addCommand(c.build(ctx));
  return group;
}
