import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { listAllProjects } from '../shared/resolve-project.js';
import { listSavedSearches } from '../shared/saved-search.js';

export interface ListOptions {
  json: boolean;
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const all = await listSavedSearches(ctx);
  if (opts.json) return emitJson(ctx, { saved_searches: all }, 'saved_searches');
  if (all.length === 0) return notice(ctx.io, 'no saved searches yet: save one with `docsearch search QUERY --save NAME`');
  // Shared ones are shown by project name; only projects are asked for when one is shared.
  const names = all.some((v) => v.project_id) ? new Map((await listAllProjects(ctx.http())).map((p) => [p.id, p.name])) : new Map<string, string>();
  printTable(ctx.io, {
    headers: ['NAME', 'SHARED WITH', 'AUTHOR', 'QUERY'],
    rows: all.map((v) => [v.name, v.project_id ? `project ${names.get(v.project_id) ?? v.project_id}` : 'only you', v.created_by, typeof v.search.query === 'string' ? v.search.query : '']),
    now: ctx.now(),
    fit: { flexible: 'QUERY', drop: ['AUTHOR'] },
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list your saved searches and those shared with you',
    description:
      'List your saved searches and those shared with projects you read: name, the project it is shared with (or "only you"), its author and its query. Run one with `docsearch search --saved NAME`.',
    examples: ['docsearch saved-searches list', 'docsearch saved-searches list --json name,mine'],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
