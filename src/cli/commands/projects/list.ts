import type { Command } from 'commander';
import type { Project } from '../../api-types.js';
import type { Context } from '../../context.js';
import { isStdoutTTY, notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';

import { printTable } from '../../output/table.js';
import { indexingDocuments, indexingNotice } from '../documents/list.js';
import { defineCommand } from '../shared/command.js';
import { listAllProjects } from '../shared/resolve-project.js';

export interface ListOptions {
  json: boolean;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const projects = await listAllProjects(ctx.http());
  if (opts.json) return emitJson(ctx, { projects }, 'projects');
  printTable(ctx.io, {
    headers: ['ID', 'NAME', 'ROLE', 'OWNER', 'DOCUMENTS', 'CHUNKS', 'SIZE', 'CREATED'],
    // "(default)" is for people; piped, the column holds the name alone (the is_default field says it in --json).
    rows: projects.map((p: Project) => [
      p.id,
      p.is_default && isStdoutTTY(ctx.io) ? `${p.name} (default)` : p.name,
      p.role,
      p.owner,
      p.document_count,
      p.chunk_count,
      { bytes: p.size_bytes },
      { time: p.created_at },
    ]),
    now: ctx.now(),
    // On a narrow terminal the name is what a person reads: counts, the owner and the date give way before it is cut.
    fit: { flexible: 'NAME', drop: ['CHUNKS', 'SIZE', 'CREATED', 'OWNER'] },
  });
  const indexing = await indexingDocuments(ctx.http());
  if (indexing.length > 0) {
    const per = projects.map((p) => [p.name, indexing.filter((d) => d.project_id === p.id).length] as const).filter(([, n]) => n > 0);
    notice(ctx.io, indexingNotice(indexing.length, ` (${per.map(([name, n]) => `${n} in ${name}`).join(', ')})`));
  }
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list your projects and those shared with you, with document counts',
    description:
      'List the projects you may read — your own and those shared with you or your groups — with your role, their owner and document counts. A line on stderr says how many documents are still being indexed, per project.',
    examples: ['docsearch projects list', 'docsearch projects list --json'],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
