import type { Command } from 'commander';
import type { ApiKey } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';

import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { keyRequest } from './key-request.js';

export interface ListOptions {
  json: boolean;
}

/** Only the recognisable ends of a key are ever shown (npm's token.js). */
export const maskedKey = (k: Pick<ApiKey, 'prefix' | 'last4'>): string => `${k.prefix}…${k.last4}`;

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const { keys } = await keyRequest(ctx, () => ctx.http().get<{ keys: ApiKey[] }>('/api/v1/keys'));
  if (opts.json) return emitJson(ctx, { keys }, 'keys');
  printTable(ctx.io, {
    headers: ['ID', 'NAME', 'KEY', 'SCOPES', 'CREATED', 'LAST USED'],
    rows: keys.map((k) => [k.id, k.name, maskedKey(k), k.scopes.join(' '), { time: k.created_at }, { time: k.last_used_at }]),
    now: ctx.now(),
  });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('list', {
    summary: 'list your API keys (never the keys themselves)',
    examples: ['docsearch keys list', 'docsearch keys list --json'],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
