import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as add from './add.js';
import * as edit from './edit.js';
import * as list from './list.js';
import * as remove from './remove.js';
import * as show from './show.js';
import * as sync from './sync.js';

/** `docsearch sources`: wiring only; `list` runs when no verb is given. */
export function sourcesCommand(ctx: Context) {
  const group = defineCommand('sources', {
    summary: 'add, list, show, edit, sync and remove the sources that keep projects current',
    examples: ['docsearch sources', 'docsearch sources add handbook file:///srv/handbook --every 15m', 'docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq --confirm'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [add, show, edit, sync, remove]) group.addCommand(c.build(ctx));
  return group;
}
