import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as create from './create.js';
import * as del from './delete.js';
import * as list from './list.js';
import * as rename from './rename.js';
import * as show from './show.js';

/** `docsearch projects`: wiring only; `list` runs when no verb is given. */
export function projectsCommand(ctx: Context) {
  const group = defineCommand('projects', {
    summary: 'list, create, show, rename and delete projects',
    examples: ['docsearch projects', 'docsearch projects create handbook', 'docsearch projects delete handbook --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [create, show, rename, del]) group.addCommand(c.build(ctx));
  return group;
}
