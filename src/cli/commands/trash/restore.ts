import type { Command } from 'commander';
import { DOCUMENT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { eachDocument, failIfAny, nameOf, outcomeJson } from '../shared/each-document.js';
import { listTrash } from './list.js';
import { pickEntries } from './pick-entries.js';

export interface RestoreOptions {
  refs: string[];
  json: boolean;
}

export async function run(opts: RestoreOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const entries = pickEntries(await listTrash(http), opts.refs);
  const outcome = await eachDocument(
    entries,
    async (e) => (await http.post(`/api/v1/trash/${encodeURIComponent(e.id)}/restore`, {}, { shape: DOCUMENT })).id,
    (e) => {
      if (!opts.json) notice(ctx.io, `restored ${nameOf(e)} (${e.id}): searchable again`);
    },
  );
  if (opts.json) await emitJson(ctx, { restored: outcome.done, ...outcomeJson(outcome) });
  failIfAny(ctx, outcome, entries.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('restore', {
    summary: 'bring deleted documents back from the trash',
    description:
      'Take documents out of the trash, by id, sync path or file name: each comes back in its project under the same id, searchable again at once ' +
      "(an e-mail with the attachments deleted with it). One whose path another document holds now is refused.",
    examples: ['docsearch trash restore doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch trash restore handbook/leave.pdf'],
  })
    .argument('<documents...>', 'ids, sync paths or file names of documents in the trash')
    .action((refs: string[]) => runF({ refs, json: Boolean(ctx.globals().json) }, ctx));
}
