import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { notice } from '../../../terminal/io.js';
import { listSources } from './find-source.js';

export async function run(opts: { project?: string; json: boolean }, ctx: Context): Promise<void> {
  const all = await listSources(ctx, opts.project);
  const sources = all.flatMap((p) => p.sources);
  if (opts.json) return emitJson(ctx, sources, 'sources');
  const names = new Map(all.map((p) => [p.project.id, p.project.name]));
  printTable(ctx.io, {
    headers: ['ID', 'PROJECT', 'KIND', 'URL', 'EVERY', 'STATUS', 'LAST SYNC'],
    // The state alone: why it is paused or failing is a sentence, for `sources show`.
    rows: sources.map((s) => [s.id, names.get(s.project_id) ?? s.project_id, s.kind, s.url, s.every, s.status, { time: s.last_sync }]),
    now: ctx.now(),
    // A narrow terminal keeps the ID whole and cuts the URL alone, leaving out the columns `show` has.
    fit: { flexible: 'URL', drop: ['EVERY', 'KIND', 'LAST SYNC', 'PROJECT'] },
  });
  const attention = sources.filter((s) => s.status === 'paused' || s.status === 'error');
  if (attention.length > 0) notice(ctx.io, `${attention.length} source${attention.length === 1 ? ' needs' : 's need'} attention: docsearch sources show ${attention[0]!.id}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list sources with their state and last pass',
    description: 'List the sources of a project, or of all your projects, with their state (active, syncing, paused with the reason, error with the message) and last pass.',
    examples: ['docsearch sources list', 'docsearch sources list --project handbook --json'],
  })
    .option('--project <project>', 'project name or id (default: all your projects)')
    .action((flags: { project?: string }) => runF({ project: flags.project, json: Boolean(ctx.globals().json) }, ctx));
}
