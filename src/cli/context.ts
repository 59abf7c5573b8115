import type { Command } from 'commander';
import { VERSION } from '../core/version.js';
import { bearerToken, REFRESH_MARGIN_MS, resolveCredential, type SessionDeps } from './auth/session.js';
import { type Browser, systemBrowser } from './browser.js';
import { CliConfig } from './config.js';
import { type CredentialStore, createCredentialStore } from './credentials.js';
import { CliError, UsageError } from '../terminal/errors.js';
import { ApiClient } from './http.js';
import { RETRY_POLICY, type RetryPolicy } from './request-retry.js';
import { UNREACHABLE_HINT } from './unreachable.js';
import { DEFAULT_SERVER } from './default-server.js';
import { type IO, notice, warn } from '../terminal/io.js';

/** How long a request waits for the server's answer by default: past any search, listing or delete a healthy server makes. */
export const DEFAULT_TIMEOUT_S = 120;

/** The longest wait a timer holds (2^31 - 1 ms, about 24 days): Node runs a longer one after 1 ms, with a warning. */
const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** A variable of seconds in milliseconds: `fallback` when unset, a usage error when not a number from 0 to MAX_SECONDS. */
function secondsVar(name: string, raw: string | undefined, fallback: number, zero: string): number {
  if (raw === undefined || raw.trim() === '') return fallback * 1000;
  const s = Number(raw);
  const hint = `e.g. ${name}=30 (0: ${zero}; default ${fallback})`;
  if (!Number.isFinite(s) || s < 0) throw new UsageError(`${name} must be a number of seconds, not "${raw}"`, hint);
  if (s > MAX_SECONDS) throw new UsageError(`${name} must be at most ${MAX_SECONDS} seconds (about 24 days), not "${raw}"`, hint);
  return s * 1000;
}

/** The retry policy with DOCSEARCH_RETRY_FOR's window; none at 0 (a script that would rather fail at once). */
function retryPolicy(raw: string | undefined): RetryPolicy | undefined {
  const forMs = secondsVar('DOCSEARCH_RETRY_FOR', raw, RETRY_POLICY.forMs / 1000, 'fail at once');
  return forMs === 0 ? undefined : { ...RETRY_POLICY, forMs };
}

/** Options every client command accepts (declared on the root program). */
export interface GlobalOptions {
  server?: string;
  json?: boolean;
  /** `--json a,b`: the fields to keep (see output/json.ts). */
  jsonFields?: string;
  /** `--jq EXPR`: a jq filter over the JSON output (implies --json). */
  jq?: string;
  token?: string;
  debug?: boolean;
}

export type ServerSource = '--server' | 'DOCSEARCH_URL' | 'saved default' | 'built-in default';

/**
 * What commands receive (gh's Factory): every field that touches disk, keychain or network is a
 * lazy provider, so `--help` and `completion` never read credentials. Tests replace any field.
 */
export interface Context {
  io: IO;
  now: () => number;
  browser: Browser;
  fetch: typeof fetch;
  globals: () => GlobalOptions;
  config: () => CliConfig;
  credentials: () => CredentialStore;
  /** The server URL and where it came from. */
  server: () => { url: string; source: ServerSource };
  session: () => SessionDeps;
  /** The authenticated API client for the resolved server. */
  http: () => ApiClient;
}

/** Accepts `host:port` or a full http(s) URL; returns the origin plus path without a trailing slash. */
export function normalizeServerUrl(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  // Quoted in refusals without what may be a password before the host (`https://me:secret@docs…`).
  const shown = raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#]*@/i, '$1…@');
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new UsageError(`invalid server URL "${shown}"`, 'use e.g. --server https://docs.example.com or --server 127.0.0.1:7411');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`invalid server URL "${shown}": only http and https are supported`);
  // A password without a user name (`http://:secret@host`) too: it was dropped without a word.
  if (u.search || u.hash || u.username || u.password) throw new UsageError(`invalid server URL "${shown}": no query, fragment or credentials allowed`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/**
 * The saved default is where `login` last logged in: a daemon restarted elsewhere (`serve --port 0` picks a new port
 * each time) strands it, so say where it came from and how to point elsewhere.
 */
const savedServerHint = (url: string) =>
  `${url} is the server you last logged in to (saved by \`docsearch login\`); if it moved, log in at its new address with \`docsearch login --server URL\`, or pass --server URL (or set DOCSEARCH_URL)`;

/**
 * The client connects directly (Node's fetch reads no proxy variables): one who set them, behind a proxy, is told so
 * when the server cannot be reached, rather than left wondering why they did nothing.
 */
function proxyIgnored(env: NodeJS.ProcessEnv): string {
  const set = ([['HTTPS_PROXY', env.HTTPS_PROXY ?? env.https_proxy], ['HTTP_PROXY', env.HTTP_PROXY ?? env.http_proxy]] as const).find(([, v]) => v);
  return set ? `; docsearch connects directly, without a proxy (it does not read ${set[0]})` : '';
}

function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * One credential lookup for all of a command's requests, concurrent ones included (`documents delete A B`
 * looks both up at once): looked up again only when a browser login is about to expire.
 */
function sharedBearer(ctx: Context): () => Promise<string> {
  let current: Promise<{ token: string; expiresAt: number | undefined }> | undefined;
  const lookup = async () => {
    const token = await bearerToken(ctx.session());
    const resolved = await resolveCredential(ctx.session());
    return { token, expiresAt: resolved?.credential.expires_at };
  };
  return async () => {
    const cached = current && (await current.catch(() => undefined));
    if (cached && (cached.expiresAt === undefined || cached.expiresAt - ctx.now() > REFRESH_MARGIN_MS)) return cached.token;
    // Set before awaiting, so calls arriving meanwhile share this lookup.
    if (!current || cached) current = lookup();
    return (await current).token;
  };
}

export function createContext(io: IO, program: Command, overrides: Partial<Context> = {}): Context {
  const globals = () => program.opts<GlobalOptions>();
  const config = once(() => new CliConfig(io.env));
  const credentials = once(() => createCredentialStore(io));
  const server = once((): { url: string; source: ServerSource } => {
    const g = globals();
    if (g.server) return { url: normalizeServerUrl(g.server), source: '--server' };
    if (io.env.DOCSEARCH_URL) return { url: normalizeServerUrl(io.env.DOCSEARCH_URL), source: 'DOCSEARCH_URL' };
    const saved = config().read().default_server;
    if (saved) {
      try {
        return { url: normalizeServerUrl(saved), source: 'saved default' };
      } catch (err) {
        throw new CliError(`cannot read ${config().path}: default_server is an ${(err as Error).message}`, undefined, 'fix or delete the file, then run `docsearch login` again');
      }
    }
    return { url: DEFAULT_SERVER, source: 'built-in default' };
  });
  const ctx: Context = {
    io,
    now: Date.now,
    browser: systemBrowser,
    fetch: globalThis.fetch,
    globals,
    config,
    credentials,
    server,
    session: () => ({
      server: ctx.server().url,
      flagToken: ctx.globals().token,
      envToken: io.env.DOCSEARCH_TOKEN || undefined,
      credentials: ctx.credentials,
      fetch: ctx.fetch,
      now: ctx.now,
    }),
    http: once(() => {
      const { url, source } = ctx.server();
      const policy = retryPolicy(io.env.DOCSEARCH_RETRY_FOR);
      return new ApiClient({
        baseUrl: url,
        token: sharedBearer(ctx),
        fetch: ctx.fetch,
        userAgent: `docsearch-cli/${VERSION}`,
        unreachableHint: `${source === 'saved default' ? savedServerHint(url) : UNREACHABLE_HINT}${proxyIgnored(io.env)}`,
        retry: policy && { policy, notify: (event, line) => (event === 'lost' ? warn(io, line) : notice(io, line)) },
        answerWithinMs: secondsVar('DOCSEARCH_TIMEOUT', io.env.DOCSEARCH_TIMEOUT, DEFAULT_TIMEOUT_S, 'no limit'),
      });
    }),
    ...overrides,
  };
  return ctx;
}
