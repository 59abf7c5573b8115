import type { Command } from 'commander';
import type { ApiKey } from '../../api-types.js';
import { resolveCredential } from '../../auth/session.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { AuthRequiredError, CliError } from '../../errors.js';
import { writeOut } from '../../io.js';
import { type Cell, printFields } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';

export interface WhoamiOptions {
  showToken: boolean;
  json: boolean;
}

export async function run(opts: WhoamiOptions, ctx: Context): Promise<void> {
  const server = ctx.server();
  const resolved = await resolveCredential(ctx.session());
  if (!resolved) throw new AuthRequiredError(`not logged in to ${server.url}`);
  const http = ctx.http();
  // Proves the credential works (and renews a browser login that is about to expire).
  try {
    await http.get('/api/v1/projects', { query: { limit: 1 } });
  } catch (err) {
    // A write-only key cannot list projects, yet it is valid.
    if (!(err instanceof CliError && 'status' in err && err.status === 403)) throw err;
  }
  const after = (await resolveCredential(ctx.session()))!.credential;
  const isKey = after.access_token.startsWith('dsk_');
  let scopes = after.scope?.split(' ').filter(Boolean) ?? null;
  if (!scopes && isKey) {
    // An API key's scopes are in the caller's key list; match by its visible ends, never the secret.
    const keys = await http.get<{ keys: ApiKey[] }>('/api/v1/keys').catch(() => ({ keys: [] as ApiKey[] }));
    scopes = keys.keys.find((k) => after.access_token.startsWith(k.prefix) && after.access_token.endsWith(k.last4))?.scopes ?? null;
  }
  const method = after.type === 'oauth' ? 'browser login (OAuth)' : isKey ? 'API key' : 'access token';
  const info = {
    server: server.url,
    server_source: server.source,
    method,
    credential_source: resolved.source,
    scopes,
    expires_at: after.expires_at ? new Date(after.expires_at).toISOString() : null,
    ...(opts.showToken ? { token: after.access_token } : {}),
  };
  if (opts.json) return emitJson(ctx, info);
  if (opts.showToken) return writeOut(ctx.io, after.access_token);
  printFields(
    ctx.io,
    [
      ['server', `${server.url} (${server.source})`],
      ['authenticated by', `${method} from ${resolved.source}`],
      ['scopes', scopes ? scopes.join(' ') : 'unknown'],
      ...(info.expires_at ? [['expires', { time: info.expires_at }] as [string, Cell]] : []),
    ],
    ctx.now(),
  );
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('whoami', {
    summary: 'show the server and how you are authenticated',
    description: 'Show which server commands talk to, how you are authenticated there and with which scopes. The token is never printed unless --show-token is given.',
    examples: ['docsearch whoami', 'docsearch whoami --json', 'docsearch whoami --show-token   # prints the secret'],
  })
    .option('--show-token', 'print the token itself on stdout')
    .action((flags: { showToken?: boolean }) => runF({ showToken: Boolean(flags.showToken), json: Boolean(ctx.globals().json) }, ctx));
}
