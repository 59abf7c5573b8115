import type { Command } from 'commander';
import { ME, type Me } from '../../api-types.js';
import { credentialMethod, resolveCredential } from '../../auth/session.js';
import type { Context } from '../../context.js';
import { AuthRequiredError } from '../../../terminal/errors.js';
import { UnreachableError } from '../../http.js';
import { warn, writeOut } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { type Cell, printFields } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { projectNames } from '../documents/list.js';

export interface WhoamiOptions {
  showToken: boolean;
  json: boolean;
}

/** How long whoami waits for the server before it shows what this machine knows, as `auth status` does. */
const ANSWER_WITHIN_MS = 10_000;

/** The account behind the credential (GET /api/v1/me); null with the reason when the server cannot be reached. */
async function account(ctx: Context, server: string): Promise<{ me: Me } | { offline: string }> {
  // A server that accepts the connection and never answers (a hung daemon, a proxy holding the request) is down too:
  // without a deadline whoami would wait for the HTTP stack's own five minutes.
  const deadline = AbortSignal.timeout(ANSWER_WITHIN_MS);
  let me: Me;
  try {
    me = await ctx.http().get('/api/v1/me', { signal: deadline, shape: ME });
  } catch (err) {
    if (deadline.aborted) return { offline: `${server} did not answer within ${ANSWER_WITHIN_MS / 1000} s` };
    // Only no answer is offline. An answer is not: rejected credentials (exit 4), API errors, and an answer that
    // names no account (another service's JSON at this path: "verified" must mean a docsearch server named it).
    if (!(err instanceof UnreachableError)) throw err;
    return { offline: err.message };
  }
  return { me };
}

/** Which projects the credential reaches: a per-project key's by name (the projects it may list), else all. */
async function projectsLine(ctx: Context, ids: string[] | null): Promise<string> {
  if (ids === null) return 'every project the account may read';
  const names = await projectNames(ctx.http());
  return `only ${ids.map((id) => (names.has(id) ? `${names.get(id)} (${id})` : id)).join(', ')}`;
}

/**
 * Like `gh auth status`: what the CLI knows locally (server, where the credential comes from) and what the server
 * says about it (account, scopes). With the server down it still shows the local part, warns, and exits 0.
 */
export async function run(opts: WhoamiOptions, ctx: Context): Promise<void> {
  const server = ctx.server();
  const resolved = await resolveCredential(ctx.session());
  if (!resolved) throw new AuthRequiredError(`not logged in to ${server.url}`);
  const answer = await account(ctx, server.url);
  // Read again: asking /me may have renewed a browser login.
  const after = (await resolveCredential(ctx.session()))!.credential;
  const method = credentialMethod(after);
  const me = 'me' in answer ? answer.me : null;
  const scopes = me?.scopes ?? after.scope?.split(' ').filter(Boolean) ?? null;
  const info = {
    server: server.url,
    server_source: server.source,
    verified: me !== null,
    account: me ? { id: me.id, email: me.email } : null,
    method,
    credential_source: resolved.source,
    scopes,
    // As /me names them; null where the server was not reached (or is older than them).
    admin: me?.admin ?? null,
    project_ids: me?.project_ids ?? null,
    // A browser login's access token ends on this machine's record (renewed as it goes); an API key's expiry only the server knows.
    expires_at: after.expires_at ? new Date(after.expires_at).toISOString() : (me?.expires_at ?? null),
    ...(opts.showToken ? { token: after.access_token } : {}),
  };
  if ('offline' in answer) warn(ctx.io, `${answer.offline}; showing what this machine knows (the account is not verified)`);
  if (opts.json) return emitJson(ctx, info);
  if (opts.showToken) return writeOut(ctx.io, after.access_token);
  printFields(
    ctx.io,
    [
      ['server', `${server.url} (${server.source})`],
      ['account', me ? me.email : 'unknown (server not reached)'],
      ['authenticated by', `${method} from ${resolved.source}`],
      ['scopes', scopes ? scopes.join(' ') : 'unknown'],
      ...(me?.admin === undefined ? [] : [['admin', me.admin ? 'yes' : 'no'] as [string, Cell]]),
      ...(me && me.project_ids !== undefined ? [['projects', await projectsLine(ctx, me.project_ids)] as [string, Cell]] : []),
      ...(info.expires_at ? [['expires', { time: info.expires_at }] as [string, Cell]] : []),
    ],
    ctx.now(),
  );
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('whoami', {
    summary: 'show the server, your account and how you are authenticated',
    description:
      'Show which server commands talk to, the account you are logged in as (and whether it is an admin), how you are authenticated, with which scopes and, for a key limited to some projects, which. ' +
      'When the server cannot be reached it shows what this machine knows, warns, and still exits 0. The token is never printed unless --show-token is given.',
    examples: ['docsearch whoami', 'docsearch whoami --json', 'docsearch whoami --show-token   # prints the secret'],
  })
    .option('--show-token', 'print the token itself on stdout')
    .action((flags: { showToken?: boolean }) => runF({ showToken: Boolean(flags.showToken), json: Boolean(ctx.globals().json) }, ctx));
}
