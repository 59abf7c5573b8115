import { type Command, InvalidArgumentError } from 'commander';
import { EXPIRES_FORMS, type KeyExpiry, parseExpires } from '../../../core/key-expiry.js';
import { CREATED_KEY } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice, writeOut } from '../../../terminal/io.js';
import { collect, defineCommand } from '../shared/command.js';
import { resolveProjects } from '../shared/resolve-project.js';
import { keyRequest } from './key-request.js';

const SCOPES = ['read:documents', 'write:documents'];

export interface CreateOptions {
  name?: string;
  scopes?: string[];
  /** Limit the key to these projects (names or ids). */
  projects?: string[];
  expires?: KeyExpiry;
  json: boolean;
}

function parseExpiresOption(value: string): KeyExpiry {
  try {
    return parseExpires(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** The request body's expiry fields: the server reckons the days from its own clock. */
const expiryBody = (expires: KeyExpiry | undefined) =>
  expires === undefined || expires === 'never' ? {} : 'days' in expires ? { expires_in_days: expires.days } : { expires_at: new Date(expires.at).toISOString() };

function parseScopes(value: string): string[] {
  const scopes = [...new Set(value.split(/[\s,]+/).filter(Boolean))];
  const unknown = scopes.filter((s) => !SCOPES.includes(s));
  if (unknown.length > 0 || scopes.length === 0) throw new InvalidArgumentError(`unknown ${unknown.length === 1 ? 'scope' : 'scopes'} ${unknown.join(', ') || '(none)'}; valid: ${SCOPES.join(', ')}`);
  return scopes;
}

export async function run(opts: CreateOptions, ctx: Context): Promise<void> {
  const limit = opts.projects?.length ? await resolveProjects(ctx, opts.projects) : undefined;
  const body = { ...(opts.name ? { name: opts.name } : {}), ...(opts.scopes ? { scopes: opts.scopes } : {}), ...(limit ? { project_ids: limit.map((p) => p.id) } : {}), ...expiryBody(opts.expires) };
  const created = await keyRequest(ctx, () => ctx.http().post('/api/v1/keys', body, { shape: CREATED_KEY }));
  if (opts.json) return emitJson(ctx, created);
  const only = limit ? `, only for ${limit.map((p) => p.name).join(', ')}` : '';
  const until = created.expires_at ? `, expires ${created.expires_at}` : '';
  notice(ctx.io, `created API key ${created.id} (${created.scopes.join(' ')}${only}${until}) — shown once, store it now:`);
  writeOut(ctx.io, created.key);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('create', {
    summary: 'create an API key and print it once',
    description:
      'Create an API key for scripts and CI. The key is printed on stdout once and cannot be shown again. A key cannot hold scopes your login lacks. With --project the key reaches only those projects (and cannot make projects). ' +
      'With --expires it stops working after that many days or from that date (00:00 UTC) or moment; without it, it never expires. An expired key gets 401 saying when it expired.',
    examples: [
      'docsearch keys create --name ci',
      'docsearch keys create --name reader --scopes read:documents',
      'docsearch keys create --name handbook-ci --project handbook',
      'docsearch keys create --name ci --expires 90d',
      'docsearch keys create --name audit --expires 2027-01-31',
      'KEY=$(docsearch keys create --name deploy)',
    ],
  })
    .option('--name <name>', 'a name to recognise the key by')
    .option('--scopes <scopes>', `comma-separated scopes (${SCOPES.join(', ')}; default: those of your login)`, parseScopes)
    .option('-p, --project <project>', 'limit the key to this project (name or id); repeatable. Default: every project you may read, now and later', collect, [])
    .option('--expires <when>', `when the key stops working: ${EXPIRES_FORMS} (default: never)`, parseExpiresOption)
    .action((flags: { name?: string; scopes?: string[]; project: string[]; expires?: KeyExpiry }) =>
      runF({ name: flags.name, scopes: flags.scopes, projects: flags.project, expires: flags.expires, json: Boolean(ctx.globals().json) }, ctx),
    );
}
