import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { count } from '../../output/plural.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { resolveProject } from '../shared/resolve-project.js';
import { listTrash } from '../trash/list.js';

export interface DeleteOptions {
  project: string;
  yes: boolean;
  json: boolean;
}

export async function run(opts: DeleteOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  // Its trash goes with it, and its document count leaves the trash out: asked only when asking.
  const trashed = opts.yes ? 0 : (await listTrash(ctx.http(), p.id)).length;
  const trash = trashed > 0 ? ` and the ${count(trashed, 'document')} in its trash` : '';
  await confirmDestructive(ctx.io, { action: `delete project "${p.name}" and its ${count(p.document_count, 'document')}${trash}`, consequence: 'This cannot be undone.' }, opts.yes);
  await ctx.http().delete(`/api/v1/projects/${encodeURIComponent(p.id)}`);
  if (opts.json) return emitJson(ctx, { deleted: p.id });
  notice(ctx.io, `deleted project ${p.name} (${p.id})`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('delete', {
    summary: 'delete a project and every document in it',
    description: 'Delete a project and every document in it. Asks first on a terminal; elsewhere --yes is required. The default project cannot be deleted.',
    examples: ['docsearch projects delete old-handbook', 'docsearch projects delete prj_0m1abc2de3FgHiJkLmNoPq --yes'],
  })
    .argument('<project>', 'project name or id')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((project: string, flags: { yes?: boolean }) => runF({ project, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
