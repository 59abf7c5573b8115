import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { findSource, sourcePath } from './find-source.js';

export async function run(opts: { id: string; project?: string; keepDocuments: boolean; yes: boolean; json: boolean }, ctx: Context): Promise<void> {
  const { project, source } = await findSource(ctx, opts.id, opts.project);
  await confirmDestructive(
    ctx.io,
    { action: `remove source ${source.url} from ${project.name}`, consequence: opts.keepDocuments ? 'Its documents stay, as uploads.' : 'The documents it made are deleted.' },
    opts.yes,
  );
  await ctx.http().delete(`${sourcePath(project, source)}${opts.keepDocuments ? '?keep_documents=true' : ''}`);
  if (opts.json) return emitJson(ctx, { removed: source.id });
  notice(ctx.io, `removed source ${source.url} (${source.id})`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('remove', {
    summary: 'remove a source and the documents it made (--keep-documents keeps them)',
    description: 'Remove a source. The documents it made are deleted with it, unless --keep-documents keeps them as uploads. Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch sources remove src_0m1abc2de3FgHiJkLmNoPq --yes', 'docsearch sources remove src_0m1abc2de3FgHiJkLmNoPq --keep-documents --yes'],
  })
    .argument('<source>', 'source id')
    .option('--project <project>', 'the project it is in (default: looked for in all)')
    .option('--keep-documents', 'keep its documents as uploads')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((id: string, flags: { project?: string; keepDocuments?: boolean; yes?: boolean }) =>
      runF({ id, project: flags.project, keepDocuments: Boolean(flags.keepDocuments), yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx),
    );
}
