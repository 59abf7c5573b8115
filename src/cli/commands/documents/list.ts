import { type Command, Option } from 'commander';
import type { DocumentRecord } from '../../api-types.js';
import type { Context } from '../../context.js';
import type { ApiClient } from '../../http.js';
import { notice } from '../../io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export const STATUSES = ['queued', 'processing', 'ready', 'failed'] as const;

export interface ListOptions {
  project?: string;
  status?: string;
  path?: string;
  json: boolean;
}

/** Every document matching the filters, following next_cursor. */
export async function listDocuments(http: ApiClient, query: { project_id?: string; status?: string; path?: string }): Promise<DocumentRecord[]> {
  const documents: DocumentRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await http.get<{ documents: DocumentRecord[]; next_cursor?: string | null }>('/api/v1/documents', { query: { ...query, limit: 100, cursor } });
    documents.push(...page.documents);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return documents;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const projectId = opts.project ? (await resolveProject(ctx, opts.project)).id : undefined;
  const documents = await listDocuments(http, { project_id: projectId, status: opts.status, path: opts.path });
  if (opts.json) return emitJson(ctx, { documents }, 'documents');
  printTable(ctx.io, {
    headers: ['ID', 'FILENAME', 'STATUS', 'CHUNKS', 'SIZE', 'UPDATED'],
    rows: documents.map((d) => [d.id, d.path ?? d.filename, statusText(d), d.chunk_count, { bytes: d.size_bytes }, { time: d.updated_at ?? d.created_at ?? null }]),
    now: ctx.now(),
  });
  const indexing = documents.filter((d) => d.status === 'queued' || d.status === 'processing').length;
  if (indexing > 0) notice(ctx.io, indexingNotice(indexing));
}

/** The line under a listing while documents are queued or processing: they are not searchable yet. */
export const indexingNotice = (n: number, where = ''): string => `still indexing ${n} document(s)${where}: not searchable until ready (\`docsearch upload --wait\` waits for them)`;

/** The caller's documents still queued or processing, in every project. */
export async function indexingDocuments(http: ApiClient): Promise<DocumentRecord[]> {
  return [...(await listDocuments(http, { status: 'queued' })), ...(await listDocuments(http, { status: 'processing' }))];
}

/** A document still being processed shows how far along it is: `processing 40%`. */
export const statusText = (d: DocumentRecord): string => (d.status === 'processing' && d.progress !== undefined ? `processing ${Math.round(d.progress * 100)}%` : d.status);

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list documents and their processing status',
    description:
      'List documents and their processing status (with how far along a document being processed is). FILENAME shows the path in the folder for documents uploaded with `upload --sync`. ' +
      'A line on stderr says how many are still being indexed.',
    examples: ['docsearch documents list', 'docsearch documents list --project handbook --status failed', 'docsearch documents list --json id,path,sha256 --jq ".documents[].path"'],
  })
    .option('-p, --project <project>', 'only this project (name or id)')
    .addOption(new Option('--status <status>', 'only documents in this state').choices(STATUSES))
    .option('--path <path>', 'only the document uploaded from this path (upload --sync)')
    .action((flags: { project?: string; status?: string; path?: string }) => runF({ ...flags, json: Boolean(ctx.globals().json) }, ctx));
}
