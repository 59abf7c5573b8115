import type { Command } from 'commander';
import { DOCUMENT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { CliError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { eachDocument, failIfAny, nameOf, outcomeJson } from '../shared/each-document.js';
import { getDocuments } from './get-document.js';

export interface RetryOptions {
  refs: string[];
  json: boolean;
}

export async function run(opts: RetryOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const docs = await getDocuments(ctx, [...new Set(opts.refs)]);
  const notFailed = docs.filter((d) => d.status !== 'failed');
  if (notFailed.length > 0) {
    throw new CliError(`only a failed document can be retried: ${notFailed.map((d) => `${d.filename} is ${d.status}`).join(', ')}`, undefined, 'see which failed with `docsearch documents list --status failed`');
  }
  const outcome = await eachDocument(
    docs,
    (d) => http.post(`/api/v1/documents/${encodeURIComponent(d.id)}/retry`, {}, { shape: DOCUMENT }),
    (d) => {
      if (!opts.json) notice(ctx.io, `queued ${nameOf(d)} (${d.id}) again`);
    },
  );
  if (opts.json) await emitJson(ctx, { documents: outcome.done, ...outcomeJson(outcome) }, 'documents');
  failIfAny(ctx, outcome, docs.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('retry', {
    summary: 'process failed documents again',
    description: 'Queue failed documents again (by id, sync path or file name), once what failed them is fixed: a model server that was down, a limit raised. Each is processed as if just uploaded.',
    examples: ['docsearch documents retry doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch documents retry scans/invoice.pdf'],
  })
    .argument('<documents...>', 'ids, sync paths or file names')
    .action((refs: string[]) => runF({ refs, json: Boolean(ctx.globals().json) }, ctx));
}
