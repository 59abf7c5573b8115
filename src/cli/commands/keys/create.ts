import { type Command, InvalidArgumentError } from 'commander';
import type { ApiKey } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice, writeOut } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { keyRequest } from './key-request.js';

const SCOPES = ['read:documents', 'write:documents'];

export interface CreateOptions {
  name?: string;
  scopes?: string[];
  json: boolean;
}

function parseScopes(value: string): string[] {
  const scopes = [...new Set(value.split(/[\s,]+/).filter(Boolean))];
  const unknown = scopes.filter((s) => !SCOPES.includes(s));
  if (unknown.length > 0 || scopes.length === 0) throw new InvalidArgumentError(`unknown ${unknown.length === 1 ? 'scope' : 'scopes'} ${unknown.join(', ') || '(none)'}; valid: ${SCOPES.join(', ')}`);
  return scopes;
}

export async function run(opts: CreateOptions, ctx: Context): Promise<void> {
  const body = { ...(opts.name ? { name: opts.name } : {}), ...(opts.scopes ? { scopes: opts.scopes } : {}) };
  const created = await keyRequest(ctx, () => ctx.http().post<ApiKey & { key: string }>('/api/v1/keys', body));
  if (opts.json) return emitJson(ctx, created);
  notice(ctx.io, `created API key ${created.id} (${created.scopes.join(' ')}) — shown once, store it now:`);
  writeOut(ctx.io, created.key);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('create', {
    summary: 'create an API key and print it once',
    description: 'Create an API key for scripts and CI. The key is printed on stdout once and cannot be shown again. A key cannot hold scopes your login lacks.',
    examples: ['docsearch keys create --name ci', 'docsearch keys create --name reader --scopes read:documents', 'KEY=$(docsearch keys create --name deploy)'],
  })
    .option('--name <name>', 'a name to recognise the key by')
    .option('--scopes <scopes>', `comma-separated scopes (${SCOPES.join(', ')}; default: those of your login)`, parseScopes)
    .action((flags: { name?: string; scopes?: string[] }) => runF({ name: flags.name, scopes: flags.scopes, json: Boolean(ctx.globals().json) }, ctx));
}
