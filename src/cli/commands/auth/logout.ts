import type { Command } from 'commander';
import { discover } from '../../auth/discovery.js';
import { CLI_CLIENT_ID, processRevocationResponse, revocationRequest } from '../../auth/oauth-client.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { notice, warn } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';

export interface LogoutOptions {
  server: string;
  json: boolean;
}

export async function run(opts: LogoutOptions, ctx: Context): Promise<void> {
  const store = ctx.credentials();
  const credential = await store.get(opts.server);
  if (!credential) {
    if (opts.json) return emitJson(ctx, { server: opts.server, logged_out: false, revoked: false });
    notice(ctx.io, `not logged in to ${opts.server}; nothing to do`);
    return;
  }
  let revoked = false;
  if (credential.type === 'oauth') {
    // Revoking the refresh token ends the whole grant (RFC 7009 §2.1); the access token goes too.
    try {
      const meta = await discover(opts.server, ctx.fetch);
      if (credential.refresh_token) await processRevocationResponse(await revocationRequest(meta, { clientId: CLI_CLIENT_ID, token: credential.refresh_token, tokenTypeHint: 'refresh_token' }, { fetch: ctx.fetch }));
      await processRevocationResponse(await revocationRequest(meta, { clientId: CLI_CLIENT_ID, token: credential.access_token, tokenTypeHint: 'access_token' }, { fetch: ctx.fetch }));
      revoked = true;
    } catch (err) {
      warn(ctx.io, `could not revoke the login on ${opts.server} (${(err as Error).message.split('\n')[0]}); forgetting it locally anyway`);
    }
  }
  await store.delete(opts.server);
  if (opts.json) return emitJson(ctx, { server: opts.server, logged_out: true, revoked });
  notice(
    ctx.io,
    credential.type === 'oauth'
      ? `Logged out of ${opts.server}${revoked ? ' (revoked on the server)' : ''}.`
      : `Logged out of ${opts.server}. The API key itself still works: revoke it with \`docsearch keys revoke\` if you no longer need it.`,
  );
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('logout', {
    summary: 'revoke the stored login and forget it',
    description: 'Revoke the stored browser login on the server (RFC 7009) and delete it from this machine. A stored API key is only forgotten, not revoked.',
    examples: ['docsearch logout', 'docsearch logout --server https://docs.example.com'],
  }).action(() => runF({ server: ctx.server().url, json: Boolean(ctx.globals().json) }, ctx));
}
