import type { Command } from 'commander';
import { VERSION } from '../../../core/version.js';
import { ME } from '../../api-types.js';
import { bearerToken, checkShape, credentialMethod, resolveCredential } from '../../auth/session.js';
import type { Context } from '../../context.js';
import type { StoredCredential } from '../../credentials.js';
import { ApiError, AuthRequiredError, CliError } from '../../../terminal/errors.js';
import { ApiClient } from '../../http.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';

export interface StatusOptions {
  json: boolean;
}

interface LoginState {
  server: string;
  /** The server commands talk to now (--server, DOCSEARCH_URL or the saved default). */
  active: boolean;
  /** Where the credential comes from: the keychain, the file, DOCSEARCH_TOKEN or --token. */
  source: string;
  method: string;
  account: string | null;
  scopes: string[] | null;
  /** ok: the server accepted it; rejected: revoked, expired beyond renewal, or lacking scopes; unreachable: no answer. */
  status: 'ok' | 'rejected' | 'unreachable';
  detail: string | null;
}

/** Asks the server who the credential belongs to (renewing a browser login that is about to expire). */
async function check(ctx: Context, server: string, source: string, credential: StoredCredential, token: () => Promise<string>, active: boolean): Promise<LoginState> {
  const client = new ApiClient({ baseUrl: server, token, fetch: ctx.fetch, userAgent: `docsearch-cli/${VERSION}` });
  const base = { server, active, source, method: credentialMethod(credential) };
  try {
    const me = await client.get('/api/v1/me', { signal: AbortSignal.timeout(10_000), shape: ME });
    return { ...base, account: me.email, scopes: me.scopes, status: 'ok', detail: null };
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    const scopes = credential.scope?.split(' ').filter(Boolean) ?? null;
    const rejected = err instanceof AuthRequiredError || err instanceof ApiError;
    return { ...base, account: null, scopes, status: rejected ? 'rejected' : 'unreachable', detail: err.message };
  }
}

/**
 * Like `gh auth status`: every saved login (and a DOCSEARCH_TOKEN or --token for the active server), each checked
 * against its server. Exits 1 when the login commands would use now does not work, 4 when there is none at all.
 */
export async function run(opts: StatusOptions, ctx: Context): Promise<void> {
  const active = ctx.server().url;
  const store = ctx.credentials();
  const saved = (await store.list()).sort();
  const states: LoginState[] = [];
  const resolved = await resolveCredential(ctx.session());
  // A token from --token or the environment wins over the saved login for the active server.
  const override = resolved && (resolved.source === '--token' || resolved.source === 'DOCSEARCH_TOKEN') ? resolved : null;
  if (override) {
    const token = async () => (checkShape(override, active), override.credential.access_token);
    states.push(await check(ctx, active, override.source, override.credential, token, true));
  }
  for (const server of saved) {
    const credential = await store.get(server);
    if (!credential) continue;
    const session = { server, credentials: ctx.credentials, fetch: ctx.fetch, now: ctx.now };
    states.push(await check(ctx, server, store.kind, credential, () => bearerToken(session), server === active && !override));
  }
  if (states.length === 0) throw new AuthRequiredError(`not logged in to any server (none saved in ${store.location})`);
  if (opts.json) await emitJson(ctx, { active_server: active, logins: states });
  else {
    printTable(ctx.io, {
      headers: ['SERVER', 'ACCOUNT', 'AUTHENTICATED BY', 'SCOPES', 'STATUS'],
      rows: states.map((s) => [
        `${s.server}${s.active ? ' (active)' : ''}`,
        s.account,
        `${s.method} from ${s.source}`,
        s.scopes?.join(' '),
        s.status === 'ok' ? 'ok' : `${s.status}: ${s.detail}`,
      ]),
      now: ctx.now(),
    });
  }
  const current = states.find((s) => s.active);
  if (!current) throw new AuthRequiredError(`not logged in to ${active}, the server commands talk to`);
  if (current.status !== 'ok') throw new CliError(`the login for ${active} does not work (${current.status})`, undefined, current.status === 'rejected' ? 'run `docsearch login` again' : 'is the server running? if it moved, `docsearch login --server URL` at its new address');
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('status', {
    summary: 'list every saved login and check that each still works',
    description:
      'List every saved login (and a DOCSEARCH_TOKEN or --token for the active server) with its server, account, how it authenticates, its scopes, ' +
      'and whether the server still accepts it (ok, rejected, or unreachable). The active server is the one commands talk to. ' +
      'Exits 1 when the active login does not work, 4 when there is no login at all.',
    examples: ['docsearch auth status', 'docsearch auth status --json --jq \'.logins[] | select(.status != "ok") | .server\''],
  }).action(() => runF({ json: Boolean(ctx.globals().json) }, ctx));
}
