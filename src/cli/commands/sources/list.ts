import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { listSources, sourceState } from './find-source.js';

export async function run(opts: { project?: string; json: boolean }, ctx: Context): Promise<void> {
  const all = await listSources(ctx, opts.project);
  const sources = all.flatMap((p) => p.sources);
  if (opts.json) return emitJson(ctx, { sources }, 'sources');
  const names = new Map(all.map((p) => [p.project.id, p.project.name]));
  printTable(ctx.io, {
    headers: ['ID', 'PROJECT', 'KIND', 'URL', 'EVERY', 'STATUS', 'LAST SYNC'],
    rows: sources.map((s) => [s.id, names.get(s.project_id) ?? s.project_id, s.kind, s.url, s.every, sourceState(s), { time: s.last_sync }]),
    now: ctx.now(),
  });
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
