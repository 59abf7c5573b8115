import type { Command } from 'commander';
import { DOCUMENT, type DocumentRecord } from '../../api-types.js';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { getDocuments } from './get-document.js';

export interface RenameOptions {
  ref: string;
  name: string;
  json: boolean;
}

export async function run(opts: RenameOptions, ctx: Context): Promise<void> {
  const [d] = (await getDocuments(ctx, [opts.ref])) as [DocumentRecord];
  const renamed = await ctx.http().patch(`/api/v1/documents/${encodeURIComponent(d.id)}`, { filename: opts.name }, { shape: DOCUMENT });
  if (opts.json) return emitJson(ctx, renamed);
  notice(ctx.io, `renamed ${d.filename} to ${renamed.filename} (${d.id}); search results show the new name at once`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('rename', {
    summary: 'give a document another name',
    description: 'Rename a document (by id, sync path or file name). The name is what search results and lists show; its sync path stays where it came from.',
    examples: ['docsearch documents rename doc_0m1abc2de3FgHiJkLmNoPq "Leave policy 2026.pdf"'],
  })
    .argument('<document>', 'id, sync path or file name')
    .argument('<name>', 'the new name (no / or \\)')
    .action((ref: string, name: string) => runF({ ref, name, json: Boolean(ctx.globals().json) }, ctx));
}
