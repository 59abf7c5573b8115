import type { Command } from 'commander';
import { SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { findSource, sourcePath } from './find-source.js';

export async function run(opts: { id: string; project?: string; confirm: boolean; json: boolean }, ctx: Context): Promise<void> {
  const found = await findSource(ctx, opts.id, opts.project);
  const s = await ctx.http().post(`${sourcePath(found.project, found.source)}/sync`, opts.confirm ? { confirm: true } : {}, { shape: SOURCE });
  if (opts.json) return emitJson(ctx, s);
  notice(ctx.io, `a pass of ${s.url} is due now${opts.confirm ? ' (deletions confirmed)' : ''}: docsearch sources show ${s.id}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('sync', {
    summary: 'run a source pass now (--confirm resumes a paused source and lets its deletions through)',
    description:
      'Run a pass of a source now. While the deletion guard holds deletions, a pass still adds and changes files and keeps holding them; --confirm lets them through (and resumes a source its owner paused, which runs no pass without it).',
    examples: ['docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq', 'docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq --confirm'],
  })
    .argument('<source>', 'source id')
    .option('--project <project>', 'the project it is in (default: looked for in all)')
    .option('--confirm', 'let the deletions the guard holds through (and resume a paused source)')
    .action((id: string, flags: { project?: string; confirm?: boolean }) => runF({ id, project: flags.project, confirm: Boolean(flags.confirm), json: Boolean(ctx.globals().json) }, ctx));
}
