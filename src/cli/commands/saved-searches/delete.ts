import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { eachDocument, failIfAny, outcomeJson } from '../shared/each-document.js';
import { authorsOnly, listSavedSearches, pickSavedSearch } from '../shared/saved-search.js';

export interface DeleteOptions {
  names: string[];
  yes: boolean;
  json: boolean;
}

export async function run(opts: DeleteOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  // Each name is found first: a typo or someone else's search fails before anything is deleted.
  const all = await listSavedSearches(ctx);
  const found = opts.names.map((n) => authorsOnly(pickSavedSearch(ctx, all, n), 'delete'));
  const searches = [...new Map(found.map((v) => [v.id, { id: v.id, filename: v.name }])).values()];
  const names = searches.map((v) => `"${v.filename}"`).join(', ');
  await confirmDestructive(ctx.io, { action: `delete saved search${searches.length === 1 ? '' : 'es'} ${names}`, consequence: 'Those shared with a project are gone for its members too.' }, opts.yes);
  const outcome = await eachDocument(
    searches,
    async (v) => (await http.delete(`/api/v1/saved-searches/${encodeURIComponent(v.id)}`), v.id),
    (v) => {
      if (!opts.json) notice(ctx.io, `deleted saved search "${v.filename}"`);
    },
  );
  if (opts.json) await emitJson(ctx, { deleted: outcome.done, ...outcomeJson(outcome) });
  failIfAny(ctx, outcome, searches.length, 'saved search', 'saved searches', 'name');
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('delete', {
    summary: 'delete saved searches of yours',
    description: 'Delete saved searches of yours, named as `search --saved` finds them (yours first, any case); one shared with you by someone else is refused. Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch saved-searches delete weekly', 'docsearch saved-searches delete weekly "old invoices" --yes'],
  })
    .argument('<names...>', 'names of saved searches (any case), or their ids')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((names: string[], flags: { yes?: boolean }) => runF({ names, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
