import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { eachDocument, failIfAny, nameOf, outcomeJson } from '../shared/each-document.js';
import { listTrash } from './list.js';
import { pickEntries } from './pick-entries.js';

export interface PurgeOptions {
  refs: string[];
  all: boolean;
  yes: boolean;
  json: boolean;
}

export async function run(opts: PurgeOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const trash = await listTrash(http);
  const entries = opts.all ? trash : pickEntries(trash, opts.refs);
  if (entries.length === 0) return opts.json ? emitJson(ctx, { purged: [], failed: [] }) : notice(ctx.io, 'the trash is empty');
  const names = entries.map(nameOf).join(', ');
  await confirmDestructive(ctx.io, { action: `delete ${entries.length === 1 ? 'document' : `${entries.length} documents`} ${names} for good`, consequence: 'They cannot be restored afterwards.' }, opts.yes);
  const outcome = await eachDocument(
    entries,
    async (e) => (await http.delete(`/api/v1/trash/${encodeURIComponent(e.id)}`), e.id),
    (e) => {
      if (!opts.json) notice(ctx.io, `deleted ${nameOf(e)} (${e.id}) for good`);
    },
  );
  if (opts.json) await emitJson(ctx, { purged: outcome.done, ...outcomeJson(outcome) });
  failIfAny(ctx, outcome, entries.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('purge', {
    summary: 'delete documents in the trash for good',
    description:
      'Remove documents from the trash now, by id, sync path or file name (or --all): their text, chunks and original file go, and they cannot be restored. ' +
      'The trash does this itself after the server\'s --trash-days. Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch trash purge doc_0m1abc2de3FgHiJkLmNoPq --yes', 'docsearch trash purge --all --yes'],
  })
    .argument('[documents...]', 'ids, sync paths or file names of documents in the trash')
    .option('--all', 'everything in the trash you may purge (instead of naming documents)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((refs: string[], flags: { all?: boolean; yes?: boolean }) => {
      if (!flags.all && refs.length === 0) throw new UsageError('name the documents to purge, or give --all');
      // Both at once is ambiguous, and guessing wrong deletes for good: refuse rather than let --all win.
      if (flags.all && refs.length > 0) throw new UsageError('--all purges the whole trash, so it cannot be combined with document names', 'name the documents, or give --all alone');
      return runF({ refs, all: Boolean(flags.all), yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx);
    });
}
