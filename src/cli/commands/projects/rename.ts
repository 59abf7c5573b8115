import type { Command } from 'commander';
import { PROJECT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export interface RenameOptions {
  project: string;
  name: string;
  json: boolean;
}

export async function run(opts: RenameOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const updated = await ctx.http().patch(`/api/v1/projects/${encodeURIComponent(p.id)}`, { name: opts.name }, { shape: PROJECT });
  if (opts.json) return emitJson(ctx, updated);
  notice(ctx.io, `renamed project ${p.name} to ${updated.name}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('rename', {
    summary: 'rename a project',
    examples: ['docsearch projects rename handbook "Employee handbook"'],
  })
    .argument('<project>', 'project name or id')
    .argument('<new-name>', 'the new name')
    .action((project: string, name: string) => runF({ project, name, json: Boolean(ctx.globals().json) }, ctx));
}
