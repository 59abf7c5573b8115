import type { Command } from 'commander';
import { PROJECT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export interface TransferOptions {
  project: string;
  email: string;
  json: boolean;
}

export async function run(opts: TransferOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const moved = await ctx.http().post(`/api/v1/projects/${encodeURIComponent(p.id)}/transfer`, { email: opts.email }, { shape: PROJECT });
  if (opts.json) return emitJson(ctx, moved);
  notice(ctx.io, `project ${moved.name} now belongs to ${moved.owner ?? opts.email.trim()}; its previous owner of record stays an owner until removed`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('transfer', {
    summary: 'make another person the owner of record of a project',
    description:
      'Make another person the owner of record of a project (it counts as theirs from then on). The previous owner of record stays an owner until removed with `projects unshare`. Owners only.',
    examples: ['docsearch projects transfer handbook alice@example.com'],
  })
    .argument('<project>', 'project name or id')
    .argument('<email>', 'the new owner’s e-mail')
    .action((project: string, email: string) => runF({ project, email, json: Boolean(ctx.globals().json) }, ctx));
}
