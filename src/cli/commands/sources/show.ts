import type { Command } from 'commander';
import { SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { printFields } from '../../output/table.js';
import { notice, writeOut } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { findSource, sourcePath } from './find-source.js';

export async function run(opts: { id: string; project?: string; json: boolean }, ctx: Context): Promise<void> {
  const found = await findSource(ctx, opts.id, opts.project);
  const s = await ctx.http().get(sourcePath(found.project, found.source), { shape: SOURCE });
  if (opts.json) return emitJson(ctx, s);
  const r = s.last_result;
  printFields(
    ctx.io,
    [
      ['id', s.id],
      ['project', found.project.name],
      ['kind', s.kind],
      ['url', s.url],
      ['every', s.every],
      ['status', s.status],
      ...(s.paused_reason ? ([['paused', s.paused_reason]] as [string, string][]) : []),
      ...(s.error ? ([['error', s.error]] as [string, string][]) : []),
      ['last sync', { time: s.last_sync }],
      ['next sync', { time: s.next_sync }],
      ['last pass', r ? `${r.listed} listed: ${r.added} added, ${r.changed} changed, ${r.deleted} deleted, ${r.unchanged} unchanged, ${r.failed} failed (${r.ms} ms)` : 'none yet'],
      ['options', JSON.stringify(s.options)],
      ['secrets', s.secrets.join(', ') || 'none'],
      ...(s.secrets_to_reenter.length ? ([['enter again', `${s.secrets_to_reenter.join(', ')}: docsearch sources edit ${s.id} --secret ${s.secrets_to_reenter[0]}`]] as [string, string][]) : []),
      ...(s.held_deletions ? ([['held', `${s.held_deletions.count} document(s) would be removed: docsearch sources sync ${s.id} --confirm removes them`]] as [string, string][]) : []),
    ],
    ctx.now(),
  );
  // Which documents the guard holds: data (stdout), one path a line, after the fields.
  for (const item of s.held_deletions?.items ?? []) writeOut(ctx.io, `  would remove ${item.path}`);
  if (s.held_deletions && s.held_deletions.count > s.held_deletions.items.length) writeOut(ctx.io, `  and ${s.held_deletions.count - s.held_deletions.items.length} more`);
  for (const item of s.item_errors?.items ?? []) notice(ctx.io, `item ${item.path}: ${item.error}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('show', {
    summary: 'show one source, its last pass and the items that failed',
    examples: ['docsearch sources show src_0m1abc2de3FgHiJkLmNoPq'],
  })
    .argument('<source>', 'source id')
    .option('--project <project>', 'the project it is in (default: looked for in all)')
    .action((id: string, flags: { project?: string }) => runF({ id, project: flags.project, json: Boolean(ctx.globals().json) }, ctx));
}
