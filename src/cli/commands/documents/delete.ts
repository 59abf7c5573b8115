import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { eachDocument, failIfAny } from '../shared/each-document.js';
import { getDocuments } from './get-document.js';

export interface DeleteOptions {
  ids: string[];
  yes: boolean;
  json: boolean;
}

export async function run(opts: DeleteOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  // Look each one up first: typos fail (all named) before anything is deleted, and the prompt can name the files.
  const docs = await getDocuments(ctx, [...new Set(opts.ids)]);
  const names = docs.map((d) => d.filename).join(', ');
  await confirmDestructive(ctx.io, { action: `delete ${docs.length === 1 ? 'document' : `${docs.length} documents`} ${names}`, consequence: 'They leave search at once and wait in the trash (`docsearch trash`) until the server empties it.' }, opts.yes);
  const outcome = await eachDocument(
    docs,
    async (d) => (await http.delete(`/api/v1/documents/${encodeURIComponent(d.id)}`), d.id),
    (d) => {
      if (!opts.json) notice(ctx.io, `deleted ${d.filename} (${d.id}): restore it with \`docsearch trash restore ${d.id}\``);
    },
  );
  if (opts.json) await emitJson(ctx, { deleted: outcome.done, failed: outcome.failed });
  failIfAny(ctx, outcome, docs.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('delete', {
    summary: 'delete documents (out of search at once, into the trash)',
    description:
      'Delete documents: they leave search at once and go to the trash with their chunks and original, where `docsearch trash restore` brings them back for the server\'s --trash-days (30 by default). Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch documents delete doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch documents delete doc_a doc_b --yes'],
  })
    .argument('<documents...>', 'ids, sync paths or file names')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((ids: string[], flags: { yes?: boolean }) => runF({ ids, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
