import { KEYS_SCOPE } from '../../auth/oauth-client.js';
import { resolveCredential } from '../../auth/session.js';
import type { Context } from '../../context.js';
import { ApiError, CliError } from '../../../terminal/errors.js';

/**
 * Runs a request of a `keys` command. The server manages keys for an API key, or for an access token holding
 * manage:keys (which only this CLI's browser login asks for). A browser login made before that scope existed is
 * refused: say how to fix it in one step, instead of the server's words meant for third-party applications.
 */
export async function keyRequest<T>(ctx: Context, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    const resolved = await resolveCredential(ctx.session());
    if (resolved?.credential.type !== 'oauth' || resolved.credential.scope?.split(' ').includes(KEYS_SCOPE)) throw err;
    throw new CliError(
      `your browser login to ${ctx.server().url} cannot manage API keys: it was made without the ${KEYS_SCOPE} scope`,
      undefined,
      `run \`docsearch login\` again (it asks for ${KEYS_SCOPE}), or manage keys at ${ctx.server().url}/settings/keys`,
    );
  }
}
