import type { Command } from 'commander';
import { SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand, intOption } from '../shared/command.js';
import { findSource, sourcePath } from './find-source.js';
import { waitForPass } from './pass-wait.js';

export interface SyncOptions {
  id: string;
  project?: string | undefined;
  confirm: boolean;
  wait: boolean;
  /** With `wait`: give up after this many seconds. */
  timeout: number;
  json: boolean;
}

export async function run(opts: SyncOptions, ctx: Context): Promise<void> {
  const found = await findSource(ctx, opts.id, opts.project);
  const path = sourcePath(found.project, found.source);
  const asked = await ctx.http().post(`${path}/sync`, opts.confirm ? { confirm: true } : {}, { shape: SOURCE });
  if (!opts.wait) {
    if (opts.json) return emitJson(ctx, asked);
    notice(ctx.io, `a pass of ${asked.url} is due now${opts.confirm ? ' (deletions confirmed)' : ''}: docsearch sources show ${asked.id}`);
    return;
  }
  await waitForPass(ctx, path, asked, opts.timeout * 1000, opts.json);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('sync', {
    summary: 'run a source pass now (--confirm resumes a paused source and lets its deletions through; --wait waits for it)',
    description:
      'Run a pass of a source now. While the deletion guard holds deletions, a pass still adds and changes files and keeps holding them; --confirm lets them through (and resumes a source its owner paused, which runs no pass without it).\n\n' +
      'With --wait, waits until the pass asked for has ended (after one already running, if any) and prints what it did; exits non-zero if the pass failed, an item failed in it, or the source is paused.',
    examples: [
      'docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq',
      'docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq --confirm',
      'docsearch sources sync src_0m1abc2de3FgHiJkLmNoPq --wait --json',
    ],
  })
    .argument('<source>', 'source id')
    .option('--project <project>', 'the project it is in (default: looked for in all)')
    .option('--confirm', 'let the deletions the guard holds through (and resume a paused source)')
    .option('-w, --wait', 'wait until the pass has ended, and say what it did')
    .option('--timeout <seconds>', 'with --wait, give up after this many seconds', intOption('--timeout', 1, 86_400), 1800)
    .action((id: string, flags: { project?: string; confirm?: boolean; wait?: boolean; timeout: number }) =>
      runF({ id, project: flags.project, confirm: Boolean(flags.confirm), wait: Boolean(flags.wait), timeout: flags.timeout, json: Boolean(ctx.globals().json) }, ctx),
    );
}
