import type { Command } from 'commander';
import { type ApiKey, KEY_LIST } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';

import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { listAllProjects } from '../shared/resolve-project.js';
import { keyRequest } from './key-request.js';

export interface ListOptions {
  json: boolean;
}

/** Only the recognisable ends of a key are ever shown (npm's token.js). */
export const maskedKey = (k: Pick<ApiKey, 'prefix' | 'last4'>): string => `${k.prefix}…${k.last4}`;

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const { keys } = await keyRequest(ctx, () => ctx.http().get('/api/v1/keys', { shape: KEY_LIST }));
  if (opts.json) return emitJson(ctx, { keys }, 'keys');
  // A limit is shown by project name; an id no longer readable (unshared since) stays an id.
  const names = keys.some((k) => k.project_ids) ? new Map((await listAllProjects(ctx.http())).map((p) => [p.id, p.name])) : new Map<string, string>();
  printTable(ctx.io, {
    headers: ['ID', 'NAME', 'KEY', 'SCOPES', 'PROJECTS', 'CREATED', 'LAST USED', 'EXPIRES'],
    rows: keys.map((k) => [
      k.id,
      k.name,
      maskedKey(k),
      k.scopes.join(' '),
      k.project_ids ? k.project_ids.map((id) => names.get(id) ?? id).join(', ') : 'all',
      { time: k.created_at },
      { time: k.last_used_at },
      { time: k.expires_at, said: k.expired ? 'expired' : undefined },
    ]),
    now: ctx.now(),
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list your API keys (never the keys themselves), the projects each may reach and when each expires',
    description:
      'List your API keys that are not revoked: name, prefix…last 4, scopes, projects, when each was made and last used, and when it expires. An expired key stays listed (EXPIRES reads "expired …") until you revoke it.',
    examples: ['docsearch keys list', 'docsearch keys list --json'],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
