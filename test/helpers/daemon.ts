import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from './eventually.js';
import { createTestDatabase } from './postgres.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO, 'bin/docsearch');
/** Shared across tests and runs so the built-in model graph is built once per machine, not per daemon (vitest.config.ts). */
export const TEST_MODEL_CACHE = join(process.env.DOCSEARCH_TEST_CACHE ?? tmpdir(), 'docsearch-test-models');

export interface Daemon {
  url: string;
  dataDir: string;
  /** The PostgreSQL database it runs on (shared mode), or undefined: SQLite in the data dir. */
  databaseUrl: string | undefined;
  /** Environment for operator commands that must reach the same library (`users add`, `clients add`). */
  env: Record<string, string>;
  /** The one-time setup link printed at first start (null once an account exists). */
  setupUrl: string | null;
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /**
   * Waits for a stdout line that holds `match` (a string, a pattern or a test) and returns it. The logger writes
   * asynchronously and its lines reach this process through a pipe, so a line can arrive after the response to the
   * request it describes: a test that reads the log right after a response races it (a clean-clone CI run failed so).
   */
  logLine(match: string | RegExp | ((line: string) => boolean), timeoutMs?: number): Promise<string>;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  dataDir?: string;
  /**
   * Run on this PostgreSQL database (DOCSEARCH_DATABASE_URL). Default: a new database on the test cluster when
   * DOCSEARCH_TEST_ENGINE=postgresql (the vitest project that reruns the API suites on PostgreSQL), else SQLite.
   */
  databaseUrl?: string;
  args?: string[];
  /** Added to (or, with an undefined value, removed from) the test process's environment. */
  env?: Record<string, string | undefined>;
  /** Milliseconds to wait for the "listening" line. */
  timeoutMs?: number;
  /** Another checkout's launcher (bench/search-ab.ts runs two builds side by side). Default: this one's. */
  bin?: string;
}

/** A new empty database on the cluster test/helpers/postgres-global.ts started for this run. */
export function newTestDatabase(): Promise<string> {
  const admin = process.env.DOCSEARCH_TEST_POSTGRES;
  if (!admin) throw new Error('DOCSEARCH_TEST_ENGINE=postgresql needs DOCSEARCH_TEST_POSTGRES (set by test/helpers/postgres-global.ts)');
  return createTestDatabase(admin);
}

/** Starts the built daemon (`bin/docsearch serve --port 0`) in a temp data dir and waits until it listens. */
export async function startDaemon(opts: StartOptions = {}): Promise<Daemon> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'docsearch-test-'));
  const databaseUrl = opts.databaseUrl ?? (process.env.DOCSEARCH_TEST_ENGINE === 'postgresql' ? await newTestDatabase() : undefined);
  // Started through the launcher itself, as users run it (npx, a bin link): its sh line sets MALLOC_ARENA_MAX
  // unless the environment does, so memory figures are the ones users get.
  const env: Record<string, string> = databaseUrl ? { DOCSEARCH_DATABASE_URL: databaseUrl } : {};
  const procEnv: Record<string, string | undefined> = { ...process.env, ...env, ...opts.env, XDG_CONFIG_HOME: join(dataDir, 'config-home') };
  const proc = spawn(
    opts.bin ?? BIN,
    ['serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE, '--log-level', 'info', ...(opts.args ?? [])],
    { env: procEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // 'close', not 'exit': a process can exit before its last output has come through the pipes.
  const exited = new Promise<number | null>((res) => proc.once('close', (code) => res(code)));

  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`daemon did not start in time.\nstderr:\n${err}\nstdout:\n${out}`)), opts.timeoutMs ?? 30_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        proc.stderr!.off('data', check);
        res(m[1]!);
      }
    };
    proc.stderr!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`daemon exited with ${code} before listening.\nstderr:\n${err}`));
    });
  });
  // The setup notice is written right after the listening line.
  await new Promise((r) => setTimeout(r, 100));
  const setup = /(http:\/\/\S+\/setup\?token=\S+)/.exec(err);
  return {
    url,
    dataDir,
    databaseUrl,
    env,
    setupUrl: setup ? setup[1]! : null,
    proc,
    stdout: () => out,
    stderr: () => err,
    logLine: (match, timeoutMs = 15_000) => {
      const test = typeof match === 'string' ? (l: string) => l.includes(match) : match instanceof RegExp ? (l: string) => match.test(l) : match;
      return waitFor(() => out.split('\n').find(test), timeoutMs, `a log line matching ${String(match)}`, { intervalMs: 20 });
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/**
 * Polls health until `ready` says yes about its components (throwing, for a state that will never get there),
 * or `what` has not happened within `timeoutMs`. Returns the seconds waited.
 */
export async function untilHealth(daemon: Daemon, ready: (components: Record<string, any>) => boolean, what: string, timeoutMs = 300_000): Promise<number> {
  const t0 = performance.now();
  const components = async () => ((await (await fetch(`${daemon.url}/api/v1/health`)).json()) as { components?: Record<string, any> }).components ?? {};
  await waitFor(async () => ready(await components()), timeoutMs, what);
  return (performance.now() - t0) / 1000;
}

/**
 * Waits until the daemon has preloaded its search indexes (health's `search_index.preload`), so that what is
 * measured next does not share the CPU with the startup preload. Returns the seconds waited.
 */
export function waitPreloaded(daemon: Daemon, timeoutMs = 300_000): Promise<number> {
  return untilHealth(
    daemon,
    (c) => {
      const preload: unknown = c.search_index?.preload;
      if (preload !== 'done' && preload !== 'running') throw new Error(`search index preload: ${String(preload)}`);
      return preload === 'done';
    },
    'search indexes preloaded',
    timeoutMs,
  );
}

/** Runs `bin/docsearch <args>` to completion. */
export function runCli(
  args: string[],
  opts: { input?: string; env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], ...(opts.cwd ? { cwd: opts.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    // Decoded across chunks: a character whose bytes two reads split is not two U+FFFD.
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`docsearch ${args.join(' ')} timed out\nstderr:\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    // 'close' (the pipes drained), not 'exit': the command's last lines can come after its exit.
    proc.once('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
    proc.stdin.end(opts.input ?? '');
  });
}

export interface TestUser {
  email: string;
  password: string;
  apiKey: string;
}

let userCounter = 0;

/** Creates an account with an API key through the operator command (`docsearch users add --api-key`). */
export async function addUser(daemon: Daemon, opts: { scopes?: string; email?: string } = {}): Promise<TestUser> {
  const email = opts.email ?? `user${++userCounter}-${process.pid}@example.com`;
  const password = 'correct horse battery staple';
  const args = ['users', 'add', email, '--data-dir', daemon.dataDir, '--api-key'];
  if (opts.scopes) args.push('--scopes', opts.scopes);
  const res = await runCli(args, { input: `${password}\n`, env: daemon.env });
  if (res.code !== 0) throw new Error(`users add failed (${res.code}): ${res.stderr}`);
  return { email, password, apiKey: res.stdout.trim() };
}

/** fetch against the daemon with an optional bearer credential and JSON body. */
export async function api(
  daemon: Daemon,
  path: string,
  opts: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const res = await fetch(daemon.url + path, { method: opts.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export function removeDir(dir: string): void {
  // Retried: a large LanceDB folder was once reported not empty mid-removal right after the daemon exited.
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}

/** Debian's chromium; DOCSEARCH_TEST_CHROMIUM points elsewhere (test/core/ci-requirements.test.ts hides it that way). */
export const CHROMIUM = process.env.DOCSEARCH_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'];
export const SHARED = resolve(REPO, '../shared');
