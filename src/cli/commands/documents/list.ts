import { type Command, Option } from 'commander';
import type { DocumentRecord } from '../../api-types.js';
import type { Context } from '../../context.js';
import { writeJson } from '../../io.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export const STATUSES = ['queued', 'processing', 'ready', 'failed'] as const;

export interface ListOptions {
  project?: string;
  status?: string;
  json: boolean;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const projectId = opts.project ? (await resolveProject(ctx, opts.project)).id : undefined;
  const documents: DocumentRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await http.get<{ documents: DocumentRecord[]; next_cursor?: string | null }>('/api/v1/documents', {
      query: { project_id: projectId, status: opts.status, cursor },
    });
    documents.push(...page.documents);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  if (opts.json) return writeJson(ctx.io, { documents });
  printTable(ctx.io, {
    headers: ['ID', 'FILENAME', 'STATUS', 'CHUNKS', 'SIZE', 'UPDATED'],
    rows: documents.map((d) => [d.id, d.filename, d.status, d.chunk_count, { bytes: d.size_bytes }, { time: d.updated_at ?? d.created_at ?? null }]),
    now: ctx.now(),
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list documents and their processing status',
    examples: ['docsearch documents list', 'docsearch documents list --project handbook --status failed'],
  })
    .option('--project <project>', 'only this project (name or id)')
    .addOption(new Option('--status <status>', 'only documents in this state').choices(STATUSES))
    .action((flags: { project?: string; status?: string }) => runF({ ...flags, json: Boolean(ctx.globals().json) }, ctx));
}
