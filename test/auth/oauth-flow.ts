import { createHash, randomBytes } from 'node:crypto';
import { addUser, type Daemon, runCli, type StartOptions } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { hiddenFields, loggedIn, type PageResponse, type WebClient } from '../server/web-client.js';

/**
 * Drives the OAuth flow over real HTTP the way a browser would: a cookie-holding web client logs
 * in through the login form, opens the authorize URL and posts the consent form.
 */

export interface RegisteredClient {
  clientId: string;
  clientSecret: string | null;
}

/** Registers a client with the operator command `docsearch clients add`. */
export async function addClient(d: Daemon, opts: { name?: string; redirectUris: string[]; public?: boolean }): Promise<RegisteredClient> {
  const args = ['clients', 'add', '--name', opts.name ?? 'Test App', '--data-dir', d.dataDir];
  for (const uri of opts.redirectUris) args.push('--redirect-uri', uri);
  if (opts.public) args.push('--public');
  const res = await runCli(args, { env: d.env });
  if (res.code !== 0) throw new Error(`clients add failed (${res.code}): ${res.stderr}`);
  const id = /^client_id: (\S+)$/m.exec(res.stdout)?.[1];
  if (!id) throw new Error(`no client_id in:\n${res.stdout}`);
  return { clientId: id, clientSecret: /^client_secret: (\S+)$/m.exec(res.stdout)?.[1] ?? null };
}

export { loggedIn } from '../server/web-client.js';

/** A daemon for the enclosing describe block and a signed-in user's web client, both set once it started. */
export function signedInSuite(opts: StartOptions = {}): { d: Daemon; web: WebClient } {
  const suite = {} as { d: Daemon; web: WebClient };
  daemonForSuite(async (started) => {
    suite.d = started;
    suite.web = await loggedIn(started, await addUser(started));
  }, opts);
  return suite;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizePath(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  return `/api/oauth/authorize?${q}`;
}

/** The hidden fields of the consent form on a page, unescaped. */
export const consentFields = (page: string): Record<string, string> => hiddenFields(page, '/oauth/consent');

/** Opens the authorize URL as the logged-in user and posts the decision; returns the final redirect. */
export async function decide(web: WebClient, params: Record<string, string | undefined>, decision: 'approve' | 'deny'): Promise<{ consent: PageResponse; redirect: URL }> {
  const consent = await web.get(authorizePath(params));
  if (consent.status !== 200) throw new Error(`authorize answered ${consent.status} ${consent.location ?? consent.text.slice(0, 300)}`);
  const res = await web.post('/oauth/consent', { ...consentFields(consent.text), decision });
  if (res.status !== 303 || !res.location) throw new Error(`consent answered ${res.status}: ${res.text.slice(0, 300)}`);
  return { consent, redirect: new URL(res.location) };
}

/** Runs authorize + consent (approve) and returns the code from the redirect. */
export async function getCode(web: WebClient, params: Record<string, string | undefined>): Promise<string> {
  const { redirect } = await decide(web, { response_type: 'code', ...params }, 'approve');
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code in ${redirect}`);
  return code;
}

export interface TokenCall {
  status: number;
  headers: Headers;
  body: any;
}

/** POST to the token (or revocation) endpoint as JSON (default), form, or form + HTTP Basic. */
export async function post(
  d: Daemon,
  path: '/api/oauth/token' | '/api/oauth/revoke',
  params: Record<string, string | undefined>,
  opts: { as?: 'json' | 'form'; basic?: [string, string] } = {},
): Promise<TokenCall> {
  const clean = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const headers: Record<string, string> = {};
  let body: string;
  if ((opts.as ?? (opts.basic ? 'form' : 'json')) === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(clean);
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(clean).toString();
  }
  if (opts.basic) {
    const enc = (s: string) => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(opts.basic[0])}:${enc(opts.basic[1])}`).toString('base64')}`;
  }
  const res = await fetch(d.url + path, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export const HEX64 = /^[0-9a-f]{64}$/;
