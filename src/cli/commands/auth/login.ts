import type { Command } from 'commander';
import { discover } from '../../auth/discovery.js';
import { startLoopbackReceiver } from '../../auth/loopback.js';
import {
  authorizationCodeGrantRequest,
  authorizationUrl,
  CLI_CLIENT_ID,
  DEFAULT_SCOPE,
  generatePkce,
  generateState,
  OAuthClientError,
  processTokenResponse,
  validateAuthorizationResponse,
} from '../../auth/oauth-client.js';
import { credentialShapeProblem, PASTE_HINT } from '../../auth/credential-shape.js';
import { toStored } from '../../auth/session.js';
import { ME, PROJECT_PAGE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import type { StoredCredential } from '../../credentials.js';
import { AuthRequiredError, CancelledError, CliError, EXIT, UsageError } from '../../../terminal/errors.js';
import { ApiClient, networkError } from '../../http.js';
import { canPrompt, isStderrTTY, notice, promptable, readLine, readStdin } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';

/** How long the browser flow waits for the redirect: the server's authorization codes live 10 minutes. */
const LOGIN_TIMEOUT_MS = 10 * 60_000;

export interface LoginOptions {
  server: string;
  noBrowser: boolean;
  withToken: boolean;
  scope: string;
  json: boolean;
}

const clientWith = (ctx: Context, server: string, token: string) =>
  new ApiClient({ baseUrl: server, token: async () => token, fetch: ctx.fetch, userAgent: 'docsearch-cli' });

async function verifyToken(ctx: Context, server: string, token: string): Promise<void> {
  const client = clientWith(ctx, server, token);
  try {
    await client.get('/api/v1/projects', { query: { limit: 1 }, shape: PROJECT_PAGE });
  } catch (err) {
    if (err instanceof AuthRequiredError) throw new AuthRequiredError(`${server} rejected the token`, 'check that you pasted the whole key (dsk_…) and that it was not revoked');
    // A write-only key cannot list projects, yet it is a valid credential.
    if (err instanceof CliError && 'status' in err && err.status === 403) return;
    throw err;
  }
}

/** Which account the new credential is (GET /api/v1/me), or null when the server does not say: login succeeded either way. */
async function accountEmail(ctx: Context, server: string, token: string): Promise<string | null> {
  const client = clientWith(ctx, server, token);
  try {
    return (await client.get('/api/v1/me', { shape: ME })).email;
  } catch (err) {
    if (err instanceof CliError) return null;
    throw err;
  }
}

/** What the user pasted: the whole redirect URL (its query is checked like the loopback's) or the bare code. */
function pastedParams(pasted: string, state: string): URLSearchParams {
  if (/^https?:\/\//i.test(pasted)) return new URL(pasted).searchParams;
  // A bare code carries no state to compare; PKCE still binds it to this login attempt.
  return new URLSearchParams({ code: pasted, state });
}

async function browserLogin(opts: LoginOptions, ctx: Context): Promise<StoredCredential> {
  // Nobody can open a browser for a job without a terminal (CI): say so at once instead of waiting 10 minutes (gh).
  if (!opts.noBrowser && !canPrompt(ctx.io)) {
    throw new UsageError(
      `${promptable(ctx.io) ? 'CI is set' : `not on a terminal${ctx.io.env.CI ? ' (CI is set)' : ''}`}, so there is no browser to log in to ${opts.server} with`,
      'pipe an API key instead: echo "$DOCSEARCH_KEY" | docsearch login --with-token (or set DOCSEARCH_TOKEN); --no-browser prints a URL to open elsewhere',
    );
  }
  const meta = await discover(opts.server, ctx.fetch);
  const receiver = await startLoopbackReceiver();
  const stopStdin = new AbortController();
  try {
    const pkce = generatePkce();
    const state = generateState();
    const url = authorizationUrl(meta, { clientId: CLI_CLIENT_ID, redirectUri: receiver.redirectUri, state, codeChallenge: pkce.challenge, scope: opts.scope });
    // Open a browser only where a person is watching; otherwise print the URL (gh authflow).
    const opened = !opts.noBrowser && isStderrTTY(ctx.io) && (await ctx.browser.open(url));
    notice(ctx.io, opened ? `Opened your browser to log in to ${opts.server}. If it did not open, visit:\n  ${url}` : `Open this URL in a browser to log in to ${opts.server}:\n  ${url}`);
    notice(ctx.io, 'Waiting for the browser… (or paste the address the browser ended on, or the code, and press Enter)');
    const pasted = readLine(ctx.io, stopStdin.signal).then((line) => (line ? pastedParams(line, state) : new Promise<never>(() => {})));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new CliError('login timed out: no answer from the browser within 10 minutes', undefined, 'run `docsearch login` again')), LOGIN_TIMEOUT_MS);
    });
    let params: URLSearchParams;
    try {
      params = await Promise.race([receiver.callback, pasted, timeout]);
    } finally {
      clearTimeout(timer);
      stopStdin.abort();
    }
    const code = validateAuthorizationResponse(params, state);
    let res: Response;
    try {
      res = await authorizationCodeGrantRequest(meta, { clientId: CLI_CLIENT_ID, code, redirectUri: receiver.redirectUri, codeVerifier: pkce.verifier }, { fetch: ctx.fetch });
    } catch (err) {
      throw networkError(opts.server, err);
    }
    return toStored(await processTokenResponse(res), ctx.now());
  } catch (err) {
    if (err instanceof OAuthClientError) {
      const denied = err.error === 'access_denied';
      throw new CliError(`login to ${opts.server} failed: ${err.message}`, EXIT.auth, denied ? 'run `docsearch login` again and approve access' : 'run `docsearch login` again; if it keeps failing, check the server log');
    }
    throw err;
  } finally {
    stopStdin.abort();
    await receiver.close();
  }
}

/** The token for --with-token: piped on stdin, or typed at a prompt that does not echo it when stdin is a terminal. */
async function readToken(ctx: Context): Promise<string> {
  if (!ctx.io.stdin.isTTY) return readStdin(ctx.io);
  const { password } = await import('@inquirer/prompts');
  try {
    return await password({ message: 'Paste your API key (dsk_…) or access token:' }, { input: ctx.io.stdin, output: ctx.io.stderr });
  } catch {
    throw new CancelledError();
  }
}

export async function run(opts: LoginOptions, ctx: Context): Promise<void> {
  let credential: StoredCredential;
  if (opts.withToken) {
    const token = (await readToken(ctx)).trim();
    if (!token) throw new UsageError('--with-token reads the token from stdin, and stdin was empty', 'echo "$DOCSEARCH_KEY" | docsearch login --with-token');
    if (/\s/.test(token)) throw new UsageError('--with-token expects a single token on stdin');
    const problem = credentialShapeProblem(token);
    if (problem) throw new AuthRequiredError(`that is not a valid key (${problem})`, PASTE_HINT);
    await verifyToken(ctx, opts.server, token);
    credential = { type: 'token', access_token: token };
  } else {
    credential = await browserLogin(opts, ctx);
  }
  const store = ctx.credentials();
  await store.set(opts.server, credential);
  ctx.config().update({ default_server: opts.server });
  const how = credential.type === 'oauth' ? 'browser login' : 'token';
  const email = await accountEmail(ctx, opts.server, credential.access_token);
  if (opts.json) return emitJson(ctx, { server: opts.server, email, method: how, scope: credential.scope ?? null, storage: store.kind });
  notice(ctx.io, `Logged in to ${opts.server}${email ? ` as ${email}` : ''} (${how}${credential.scope ? `; scopes: ${credential.scope}` : ''}). Credentials are in ${store.location}.`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('login', {
    summary: 'log in to a docsearch server',
    description:
      'Log in through your browser (OAuth authorization code + PKCE with a loopback redirect to 127.0.0.1), or with an API key read from stdin. ' +
      'The credential is stored per server in the OS keychain (a 0600 file where none is available) and the server becomes the default for later commands. ' +
      'Browser logins renew themselves before they expire.',
    examples: [
      'docsearch login',
      'docsearch login --server https://docs.example.com',
      'docsearch login --no-browser        # print the URL; paste the final address back',
      'echo "$DOCSEARCH_KEY" | docsearch login --with-token',
    ],
  })
    .option('--no-browser', 'do not open a browser: print the URL and wait for the redirect or a pasted code')
    .option('--with-token', 'read an API key or access token from stdin (a prompt that does not echo on a terminal) instead of the browser flow')
    .option('--scope <scopes>', 'space-separated scopes to ask for', DEFAULT_SCOPE)
    .action((flags: { browser: boolean; withToken?: boolean; scope: string }) =>
      runF({ server: ctx.server().url, noBrowser: !flags.browser, withToken: Boolean(flags.withToken), scope: flags.scope, json: Boolean(ctx.globals().json) }, ctx),
    );
}
