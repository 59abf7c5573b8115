import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';

import { printFields } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export interface ShowOptions {
  project: string;
  json: boolean;
}

export async function run(opts: ShowOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  if (opts.json) return emitJson(ctx, p);
  printFields(
    ctx.io,
    [
      ['id', p.id],
      ['name', p.name],
      ['default', p.is_default ? 'yes' : 'no'],
      ['description', p.description],
      ['documents', p.document_count],
      ['chunks', p.chunk_count],
      ['size', { bytes: p.size_bytes }],
      ['metadata', JSON.stringify(p.metadata)],
      ['created', { time: p.created_at }],
      ['updated', { time: p.updated_at }],
    ],
    ctx.now(),
  );
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('show', {
    summary: 'show one project',
    examples: ['docsearch projects show handbook', 'docsearch projects show prj_0m1abc2de3FgHiJkLmNoPq --json'],
  })
    .argument('<project>', 'project name or id')
    .action((project: string) => runF({ project, json: Boolean(ctx.globals().json) }, ctx));
}
