import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as create from './create.js';
import * as del from './delete.js';
import * as list from './list.js';
import * as members from './members.js';
import * as rename from './rename.js';
import * as settings from './settings.js';
import * as share from './share.js';
import * as show from './show.js';
import * as transfer from './transfer.js';
import * as unshare from './unshare.js';

/** `docsearch projects`: wiring only; `list` runs when no verb is given. */
export function projectsCommand(ctx: Context) {
  const group = defineCommand('projects', {
    summary: 'list, create, show, rename, set, share and delete projects',
    examples: ['docsearch projects', 'docsearch projects create handbook', 'docsearch projects share handbook group:legal --role editor', 'docsearch projects delete handbook --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [create, show, rename, settings, share, unshare, members, transfer, del]) group.addCommand(c.build(ctx));
  return group;
}
