import type { Command } from 'commander';
import { DOCUMENT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';
import { eachDocument, failIfAny, nameOf, outcomeJson } from '../shared/each-document.js';
import { getDocuments } from './get-document.js';

export interface MoveOptions {
  refs: string[];
  to: string;
  json: boolean;
}

export async function run(opts: MoveOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const project = await resolveProject(ctx, opts.to);
  const docs = await getDocuments(ctx, [...new Set(opts.refs)]);
  const outcome = await eachDocument(
    docs,
    (d) => http.patch(`/api/v1/documents/${encodeURIComponent(d.id)}`, { project_id: project.id }, { shape: DOCUMENT }),
    (d) => {
      if (!opts.json) notice(ctx.io, `moved ${nameOf(d)} (${d.id}) to ${project.name}`);
    },
  );
  if (opts.json) await emitJson(ctx, { documents: outcome.done, ...outcomeJson(outcome) }, 'documents');
  failIfAny(ctx, outcome, docs.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('move', {
    summary: 'move documents to another project',
    description:
      'Move documents (by id, sync path or file name), chunks included, to another project you edit: search finds each in exactly one of the two at every moment. ' +
      'A document still being indexed, or one whose bytes or path the other project already holds, is refused.',
    examples: ['docsearch documents move doc_0m1abc2de3FgHiJkLmNoPq --to archive', 'docsearch documents move report.pdf notes.txt --to handbook'],
  })
    .argument('<documents...>', 'ids, sync paths or file names')
    .requiredOption('--to <project>', 'the project to move them to (name or id)')
    .action((refs: string[], flags: { to: string }) => runF({ refs, to: flags.to, json: Boolean(ctx.globals().json) }, ctx));
}
