import type { Context } from '../../context.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';
import * as del from './delete.js';
import * as label from './label.js';
import * as list from './list.js';
import * as move from './move.js';
import * as rename from './rename.js';
import * as retry from './retry.js';
import * as show from './show.js';

/** `docsearch documents`: wiring only; `list` runs when no verb is given. */
export function documentsCommand(ctx: Context) {
  const group = defineCommand('documents', {
    summary: 'list, show, retry, rename, move, label and delete uploaded documents',
    examples: ['docsearch documents', 'docsearch documents list --status failed', 'docsearch documents delete doc_0m1abc2de3FgHiJkLmNoPq --yes'],
  });
  addDefaultSubcommand(group, list.build(ctx));
  for (const c of [show, retry, rename, move, label, del]) group.addCommand(c.build(ctx));
  return group;
}
