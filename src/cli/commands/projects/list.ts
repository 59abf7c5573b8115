import type { Command } from 'commander';
import type { Project } from '../../api-types.js';
import type { Context } from '../../context.js';
import { isStdoutTTY } from '../../io.js';
import { emitJson } from '../../output/json.js';

import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { listAllProjects } from '../shared/resolve-project.js';

export interface ListOptions {
  json: boolean;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const projects = await listAllProjects(ctx.http());
  if (opts.json) return emitJson(ctx, { projects }, 'projects');
  printTable(ctx.io, {
    headers: ['ID', 'NAME', 'DOCUMENTS', 'CHUNKS', 'SIZE', 'CREATED'],
    // "(default)" is for people; piped, the column holds the name alone (the is_default field says it in --json).
    rows: projects.map((p: Project) => [p.id, p.is_default && isStdoutTTY(ctx.io) ? `${p.name} (default)` : p.name, p.document_count, p.chunk_count, { bytes: p.size_bytes }, { time: p.created_at }]),
    now: ctx.now(),
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list your projects with document counts',
    examples: ['docsearch projects list', 'docsearch projects list --json'],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
