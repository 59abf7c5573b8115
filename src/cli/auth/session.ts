import type { CredentialStore, StoredCredential } from '../credentials.js';
import { AuthRequiredError, CliError } from '../../terminal/errors.js';
import { networkError } from '../http.js';
import { credentialShapeProblem, PASTE_HINT } from './credential-shape.js';
import { discover } from './discovery.js';
import { CLI_CLIENT_ID, OAuthClientError, processTokenResponse, refreshTokenGrantRequest, type TokenSet } from './oauth-client.js';

/** Refresh this long before expiry, so a token never dies in the middle of an upload batch. */
export const REFRESH_MARGIN_MS = 120_000;

export type CredentialSource = '--token' | 'DOCSEARCH_TOKEN' | 'keychain' | 'file';

export interface ResolvedCredential {
  source: CredentialSource;
  credential: StoredCredential;
}

export interface SessionDeps {
  server: string;
  flagToken?: string;
  envToken?: string;
  credentials: () => CredentialStore;
  fetch: typeof fetch;
  now: () => number;
}

/** How a credential authenticates, in words (`whoami`, `auth status`). */
export function credentialMethod(c: StoredCredential): string {
  return c.type === 'oauth' ? 'browser login (OAuth)' : c.access_token.startsWith('dsk_') ? 'API key' : 'access token';
}

/** Turns a token response into what the store keeps. */
export function toStored(tokens: TokenSet, now: number): StoredCredential {
  return {
    type: 'oauth',
    access_token: tokens.access_token,
    ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    expires_at: now + tokens.expires_in * 1000,
    ...(tokens.scope ? { scope: tokens.scope } : {}),
  };
}

/** `--token` beats DOCSEARCH_TOKEN beats the stored login for the server (so CI never reads a keychain). */
export async function resolveCredential(d: SessionDeps): Promise<ResolvedCredential | null> {
  if (d.flagToken) return { source: '--token', credential: { type: 'token', access_token: d.flagToken } };
  if (d.envToken) return { source: 'DOCSEARCH_TOKEN', credential: { type: 'token', access_token: d.envToken } };
  const store = d.credentials();
  const stored = await store.get(d.server);
  return stored ? { source: store.kind, credential: stored } : null;
}

/**
 * Refuses a credential whose shape no server issues, naming where it came from (exit 4): sent, it would fail inside
 * fetch and be taken for a network failure. A saved one that is not whole was damaged on this machine.
 */
export function checkShape(resolved: ResolvedCredential, server: string): void {
  const { credential, source } = resolved;
  const problem = [credential.access_token, credential.refresh_token].flatMap((t) => (t === undefined ? [] : [credentialShapeProblem(t)])).find(Boolean);
  if (!problem) return;
  if (source === '--token' || source === 'DOCSEARCH_TOKEN') throw new AuthRequiredError(`${source}: that is not a valid key (${problem})`, PASTE_HINT);
  throw new AuthRequiredError(`the login saved for ${server} is damaged (${problem})`, `run \`docsearch login --server ${server}\` again`);
}

/**
 * The bearer credential for the next request. A stored OAuth login close to expiry is refreshed
 * first (refresh tokens rotate: the new pair is saved before it is used); a failed refresh is
 * an authentication error (exit 4) with the login hint.
 */
export async function bearerToken(d: SessionDeps): Promise<string> {
  const resolved = await resolveCredential(d);
  if (!resolved) throw new AuthRequiredError(`not logged in to ${d.server}`);
  checkShape(resolved, d.server);
  const { credential } = resolved;
  if (credential.type !== 'oauth' || credential.expires_at === undefined || credential.expires_at - d.now() > REFRESH_MARGIN_MS) {
    return credential.access_token;
  }
  if (!credential.refresh_token) throw new AuthRequiredError(`your login to ${d.server} has expired`);
  let tokens: TokenSet;
  try {
    const meta = await discover(d.server, d.fetch);
    let res: Response;
    try {
      res = await refreshTokenGrantRequest(meta, { clientId: CLI_CLIENT_ID, refreshToken: credential.refresh_token }, { fetch: d.fetch });
    } catch (err) {
      throw networkError(d.server, err);
    }
    tokens = await processTokenResponse(res);
  } catch (err) {
    if (err instanceof OAuthClientError) throw new AuthRequiredError(`your login to ${d.server} expired and could not be renewed (${err.message})`);
    if (err instanceof CliError) throw err;
    throw err;
  }
  const next = toStored(tokens, d.now());
  // Servers that do not rotate keep the old refresh token valid.
  if (!next.refresh_token) next.refresh_token = credential.refresh_token;
  await d.credentials().set(d.server, next);
  return next.access_token;
}
