import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { authorsOnly, findSavedSearch, SAVED_SEARCH } from '../shared/saved-search.js';

export interface RenameOptions {
  name: string;
  newName: string;
  json: boolean;
}

export async function run(opts: RenameOptions, ctx: Context): Promise<void> {
  const saved = authorsOnly(await findSavedSearch(ctx, opts.name), 'rename');
  const updated = await ctx.http().patch(`/api/v1/saved-searches/${encodeURIComponent(saved.id)}`, { name: opts.newName }, { shape: SAVED_SEARCH });
  if (opts.json) return emitJson(ctx, updated);
  notice(ctx.io, `renamed saved search "${saved.name}" to "${updated.name}"`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('rename', {
    summary: 'rename one of your saved searches',
    description: 'Rename one of your saved searches (its search stays as it was). Only its author renames one shared with a project.',
    examples: ['docsearch saved-searches rename weekly "weekly invoices"'],
  })
    .argument('<name>', 'its name now (any case), or its id')
    .argument('<new-name>', 'the new name')
    .action((name: string, newName: string) => runF({ name, newName, json: Boolean(ctx.globals().json) }, ctx));
}
