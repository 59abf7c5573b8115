import type { Command } from 'commander';
import { TRASH_PAGE, type TrashEntry } from '../../api-types.js';
import type { Context } from '../../context.js';
import type { ApiClient } from '../../http.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { projectNames } from '../documents/list.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export interface ListOptions {
  project?: string;
  json: boolean;
}

/** Every document in the trash the caller may restore (of one project, when given), newest first, following next_cursor. */
export async function listTrash(http: ApiClient, projectId?: string): Promise<TrashEntry[]> {
  const entries: TrashEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await http.get('/api/v1/trash', { query: { project_id: projectId, limit: 100, cursor }, shape: TRASH_PAGE });
    entries.push(...page.documents);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return entries;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const project = opts.project ? await resolveProject(ctx, opts.project) : undefined;
  const entries = await listTrash(http, project?.id);
  if (opts.json) return emitJson(ctx, { documents: entries }, 'trash', 'documents');
  if (entries.length === 0) return notice(ctx.io, 'the trash is empty');
  const names = project ? new Map([[project.id, project.name]]) : await projectNames(http);
  printTable(ctx.io, {
    headers: ['ID', 'FILENAME', 'PROJECT', 'DELETED', 'PURGED'],
    rows: entries.map((d) => [d.id, d.path ?? d.filename, names.get(d.project_id) ?? d.project_id, { time: d.trashed_at }, { time: d.purge_at }]),
    now: ctx.now(),
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list deleted documents still in the trash',
    description:
      'List the documents deleted from the projects you edit that the trash still keeps (the server\'s --trash-days, 30 by default), newest first: ' +
      'when each was deleted and when it is removed for good (PURGED). `docsearch trash restore` brings one back, searchable again under the same id.',
    examples: ['docsearch trash list', 'docsearch trash list --project handbook', 'docsearch trash list --json id,filename,purge_at'],
  })
    .option('-p, --project <project>', 'only this project (name or id)')
    .action((flags: { project?: string }) => runF({ ...flags, json: Boolean(ctx.globals().json) }, ctx));
}
