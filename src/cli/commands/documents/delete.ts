import type { Command } from 'commander';
import { TRASH_PAGE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { count } from '../../output/plural.js';
import { ApiError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { eachDocument, failIfAny, outcomeJson } from '../shared/each-document.js';
import { getDocuments } from './get-document.js';

export interface DeleteOptions {
  ids: string[];
  yes: boolean;
  json: boolean;
}

/**
 * The server's --trash-days, from the trash's answer (`retention_days`): with 0 a delete is for good, which the
 * prompt must say. Undefined when the server does not say (older than the field) or the key may not read the trash.
 */
async function trashDays(ctx: Context): Promise<number | undefined> {
  try {
    return (await ctx.http().get('/api/v1/trash', { query: { limit: 1 }, shape: TRASH_PAGE })).retention_days;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return undefined;
    throw err;
  }
}

/** What deleting does on this server, for the prompt. */
function consequence(days: number | undefined, one: boolean): string {
  const [they, them] = one ? ['It', 'it'] : ['They', 'them'];
  if (days === 0) return `The server keeps no trash (--trash-days 0): ${they.toLowerCase()} ${one ? 'is' : 'are'} deleted for good at once and cannot be restored.`;
  if (days === undefined) return `${they} leave${one ? 's' : ''} search at once and wait${one ? 's' : ''} in the trash (\`docsearch trash\`) for the server's --trash-days, unless it keeps none (then ${they.toLowerCase()} ${one ? 'is' : 'are'} gone for good).`;
  return `${they} leave${one ? 's' : ''} search at once and wait${one ? 's' : ''} in the trash (\`docsearch trash\`) for ${count(days, 'day')}, where \`docsearch trash restore\` brings ${them} back; then ${they.toLowerCase()} ${one ? 'is' : 'are'} gone for good.`;
}

export async function run(opts: DeleteOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  // Look each one up first: typos fail (all named) before anything is deleted, and the prompt can name the files.
  const docs = await getDocuments(ctx, [...new Set(opts.ids)]);
  const days = await trashDays(ctx);
  const names = docs.map((d) => d.filename).join(', ');
  await confirmDestructive(ctx.io, { action: `delete ${docs.length === 1 ? 'document' : `${docs.length} documents`} ${names}`, consequence: consequence(days, docs.length === 1) }, opts.yes);
  const outcome = await eachDocument(
    docs,
    async (d) => (await http.delete(`/api/v1/documents/${encodeURIComponent(d.id)}`), d.id),
    (d) => {
      if (opts.json) return;
      if (days === 0) notice(ctx.io, `deleted ${d.filename} (${d.id}) for good: the server keeps no trash`);
      else if (days === undefined) notice(ctx.io, `deleted ${d.filename} (${d.id}); if the server keeps a trash, \`docsearch trash restore ${d.id}\` brings it back`);
      else notice(ctx.io, `deleted ${d.filename} (${d.id}): restore it with \`docsearch trash restore ${d.id}\``);
    },
  );
  if (opts.json) await emitJson(ctx, { deleted: outcome.done, retention_days: days ?? null, ...outcomeJson(outcome) });
  failIfAny(ctx, outcome, docs.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('delete', {
    summary: 'delete documents (out of search at once, into the trash if the server keeps one)',
    description:
      "Delete documents: they leave search at once and go to the trash with their chunks and original, where `docsearch trash restore` brings them back for the server's --trash-days (30 by default). " +
      'A server run with --trash-days 0 keeps no trash: there deleting is for good, and the prompt and the output say so (--json: `retention_days`). ' +
      'Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch documents delete doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch documents delete doc_a doc_b --yes'],
  })
    .argument('<documents...>', 'ids, sync paths or file names')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((ids: string[], flags: { yes?: boolean }) => runF({ ids, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
