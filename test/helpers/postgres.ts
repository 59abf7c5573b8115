import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';

/**
 * Real PostgreSQL 15 clusters for tests: Debian's server binaries, a throwaway data directory, 127.0.0.1 on a
 * free port, durability off (fsync, full-page writes) for speed. initdb runs once per machine into a template
 * that each cluster copies. Root cannot run PostgreSQL, so as root the server runs as the `postgres` user
 * (Debian's package creates it); any other user runs it as themselves. No vitest import: benches use it too.
 */
export const PG_BIN = process.env.DOCSEARCH_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

interface RunAs {
  uid: number;
  gid: number;
}

function postgresAccount(): RunAs | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : null;
}

/** The account the server runs as: `postgres` when we are root, else ourselves (undefined: no switch). */
function runAs(): RunAs | undefined {
  return process.getuid?.() === 0 ? (postgresAccount() ?? undefined) : undefined;
}

/** Why PostgreSQL tests cannot run on this machine, or null when they can (under CI a reason fails the run: requirement.ts). */
export function postgresUnavailable(): string | null {
  return unmet(postgresProblem());
}

function postgresProblem(): string | null {
  if (!existsSync(join(PG_BIN, 'postgres')) || !existsSync(join(PG_BIN, 'initdb'))) {
    return `PostgreSQL 15 server binaries not found in ${PG_BIN} (Debian: apt-get install postgresql-15)`;
  }
  if (process.getuid?.() === 0 && !postgresAccount()) return 'running as root, and there is no "postgres" user to run the server as (PostgreSQL refuses root)';
  return null;
}

/** A directory the server's account owns. */
function ownedDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const as = runAs();
  if (as) chownSync(dir, as.uid, as.gid);
  return dir;
}

/** initdb's output, made once per machine (concurrent callers each make one; the first rename wins), outside a run's temporary folder (vitest.config.ts). */
function template(): string {
  const as = runAs();
  const path = join(process.env.DOCSEARCH_TEST_CACHE ?? tmpdir(), `docsearch-test-pg15-template-${as?.uid ?? process.getuid?.() ?? 'user'}`);
  if (existsSync(join(path, 'PG_VERSION'))) return path;
  const work = ownedDir('docsearch-test-pg-initdb-');
  const data = join(work, 'data');
  const res = spawnSync(join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale', 'C.UTF-8', '--no-sync'], {
    ...(as ?? {}),
    cwd: work,
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`initdb failed (${res.status}): ${res.stderr}`);
  try {
    renameSync(data, path);
  } catch {
    // Another process made it first.
  }
  rmSync(work, { recursive: true, force: true });
  return path;
}

export interface PgCluster {
  port: number;
  /** A URL of the `postgres` database, for administration. */
  adminUrl: string;
  /** A new empty database (see createTestDatabase). */
  createDatabase(password?: string): Promise<string>;
  /** Fast shutdown (SIGINT to the server's pid); the data directory stays for `start`. */
  stop(): Promise<void>;
  /** Starts the server again on the same port and data. */
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
  /** The server's (postmaster's) process id while it runs. */
  pid(): number | undefined;
}

let databases = 0;

/**
 * Creates a new empty database through the admin URL of a test cluster; its URL, with `password` in it if given
 * (local connections are trusted, so it is never checked, but a test can look for it in what a daemon prints).
 */
export async function createTestDatabase(adminUrl: string, password?: string): Promise<string> {
  // A random part too: the suite's worker processes come and go over a run, and a later one given the pid of an
  // earlier one (run65: "database ds_11745_1 already exists") counted from 1 again on the same cluster.
  const name = `ds_${process.pid}_${++databases}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (password) url.password = password;
  return url.toString();
}

/**
 * How often each statement ran in the database at `url` so far, by pg_stat_statements' normalised text (constants
 * as $1, $2, …). Counted as each statement ends, with no statistics delay, across every connection.
 */
export async function statementCalls(url: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query<{ query: string; calls: string }>(
      'SELECT query, sum(calls) AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) GROUP BY query',
    );
    return new Map(rows.map((r) => [r.query, Number(r.calls)]));
  } finally {
    await client.end();
  }
}

/** Calls of the statements matching `pattern` between two statementCalls() answers. */
export function callsBetween(before: Map<string, number>, after: Map<string, number>, pattern: RegExp): number {
  let n = 0;
  for (const [query, calls] of after) if (pattern.test(query)) n += calls - (before.get(query) ?? 0);
  return n;
}

export async function startPostgres(): Promise<PgCluster> {
  const reason = postgresUnavailable();
  if (reason) throw new Error(reason);
  const dir = ownedDir('docsearch-test-pg-');
  const data = join(dir, 'data');
  const as = runAs();
  const copy = spawnSync('cp', ['-a', template(), data], { encoding: 'utf8' });
  if (copy.status !== 0) throw new Error(`copying the initdb template failed: ${copy.stderr}`);
  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc: ChildProcess | undefined;
  let log = '';

  const start = async () => {
    log = '';
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: dir,
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '300',
      shared_buffers: '32MB',
      // Tests count the statements a daemon sends (statementCalls).
      shared_preload_libraries: 'pg_stat_statements',
    };
    const args = ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const server = spawn(join(PG_BIN, 'postgres'), args, { ...(as ?? {}), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    proc = server;
    server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`postgres exited with ${server.exitCode}:\n${log}`);
      const client = new pg.Client({ connectionString: adminUrl });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections in 60 s: ${(err as Error).message}\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async () => {
    const server = proc;
    proc = undefined;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGINT'); // fast shutdown: ends sessions, no waiting for clients
    await exited;
  };

  await start();
  return {
    port,
    adminUrl,
    createDatabase: (password) => createTestDatabase(adminUrl, password),
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    pid: () => proc?.pid,
  };
}
