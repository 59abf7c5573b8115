/**
 * Shared mode end to end: a real PostgreSQL 15, a real Ceph RGW, N `docsearch serve` replicas (the built binary,
 * each with its own data dir, all on one database and one bucket prefix) and Debian's haproxy in front of them.
 * Everything binds to 127.0.0.1 on free ports. `stop()` takes it all down; every process it started is also
 * killed by pid when the test process exits some other way (a crash, a timeout), so nothing outlives a run.
 * No vitest import: bench/scale.ts starts the same topology.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Daemon, removeDir, startDaemon } from './daemon.js';
import { haproxyMissing, type HealthCheck, type LoadBalancer, startHaproxy } from './haproxy.js';
import { type PgCluster, postgresUnavailable, startPostgres } from './postgres.js';
import { freePort } from './ports.js';
import { type Rgw, rgwUnavailable, startRgw } from './rgw.js';

/** Why the whole topology cannot run here (a missing package, not root), or null when it can. */
export function topologyUnavailable(): string | null {
  return postgresUnavailable() ?? rgwUnavailable() ?? haproxyMissing();
}

/** What started processes here and has not stopped them yet: their pids are killed on exit, however it comes. */
const running = new Set<() => (number | undefined)[]>();
let exitHook = false;
function track(pids: () => (number | undefined)[]): () => void {
  running.add(pids);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const source of running) {
        for (const pid of source()) {
          try {
            if (pid !== undefined) process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });
  }
  return () => running.delete(pids);
}

export interface Replica {
  /** Position in the topology (0-based), also haproxy's server name `r<index>`. */
  index: number;
  port: number;
  /** http://127.0.0.1:PORT: the replica itself, not the load balancer. */
  url: string;
  dataDir: string;
  /** The running process (replaced by `start()`). */
  daemon: Daemon;
  /** Everything it wrote to stdout (JSON log lines) across restarts. */
  logs(): string;
  /** SIGKILL: no shutdown at all, as a crash or an OOM kill. */
  kill9(): Promise<void>;
  /** SIGTERM and wait (graceful). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data dir; `args` are added to the topology's `serve` flags for this run. */
  start(args?: string[]): Promise<void>;
  running(): boolean;
}

export interface Topology {
  pg: PgCluster;
  rgw: Rgw;
  /** The library's database (DOCSEARCH_DATABASE_URL). */
  databaseUrl: string;
  /** The library's storage (`--storage`). */
  storage: string;
  replicas: Replica[];
  /** haproxy in front of every replica. */
  lb: LoadBalancer;
  /** What operator commands and the CLI need to reach the same library (database URL, AWS_* variables). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface TopologyOptions {
  replicas?: number;
  /** Extra `serve` flags for every replica. */
  args?: string[];
  /** haproxy's health check (FAST_CHECK unless told). */
  check?: HealthCheck;
}

/**
 * Starts PostgreSQL and RGW together, then the `replicas` daemons together (as a service manager starts them:
 * they migrate the library once, docs/scale-out.md), then haproxy.
 */
export async function startTopology(opts: TopologyOptions = {}): Promise<Topology> {
  const reason = topologyUnavailable();
  if (reason) throw new Error(reason);
  const count = opts.replicas ?? 3;
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
  };
  try {
    const [pgStarted, rgwStarted] = await Promise.allSettled([startPostgres(), startRgw()]);
    if (pgStarted.status === 'fulfilled') {
      const pg = pgStarted.value;
      const untrackPg = track(() => [pg.pid()]);
      cleanups.push(async () => {
        await pg.destroy();
        untrackPg();
      });
    }
    if (rgwStarted.status === 'fulfilled') {
      const rgw = rgwStarted.value;
      const untrackRgw = track(() => rgw.pids());
      cleanups.push(async () => {
        await rgw.stop();
        untrackRgw();
      });
    }
    if (pgStarted.status === 'rejected') throw pgStarted.reason;
    if (rgwStarted.status === 'rejected') throw rgwStarted.reason;
    const [pg, rgw] = [pgStarted.value, rgwStarted.value];
    const databaseUrl = await pg.createDatabase();
    const storage = `s3://${rgw.bucket}/library`;
    const env = { DOCSEARCH_DATABASE_URL: databaseUrl, ...rgw.env() };
    const lbPort = await freePort();
    const publicUrl = `http://127.0.0.1:${lbPort}`;

    // Each replica takes a port of its own (freePort never hands one out twice) and a data dir of its own.
    const cfg = { databaseUrl, storage, env, publicUrl, args: opts.args ?? [] };
    const started = await Promise.allSettled(Array.from({ length: count }, (_, index) => startReplica(index, cfg)));
    const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    cleanups.push(async () => {
      await Promise.all(
        replicas.map(async (replica) => {
          await replica.stop().catch(() => undefined);
          removeDir(replica.dataDir);
        }),
      );
    });
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const lb = await startHaproxy(
      replicas.map((r) => r.port),
      { port: lbPort, ...(opts.check ? { check: opts.check } : {}) },
    );
    const untrackLb = track(() => [lb.pid]);
    cleanups.push(async () => {
      await lb.stop();
      untrackLb();
    });
    return { pg, rgw, databaseUrl, storage, replicas, lb, env, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function startReplica(
  index: number,
  cfg: { databaseUrl: string; storage: string; env: Record<string, string>; publicUrl: string; args: string[] },
): Promise<Replica> {
  const dataDir = mkdtempSync(join(tmpdir(), `docsearch-replica-${index}-`));
  const port = await freePort();
  let past = '';
  const launch = async (extra: string[] = []) => {
    const d = await startDaemon({
      dataDir,
      databaseUrl: cfg.databaseUrl,
      env: cfg.env,
      args: ['--port', String(port), '--storage', cfg.storage, '--public-url', cfg.publicUrl, ...cfg.args, ...extra],
      timeoutMs: 120_000,
    });
    const untrack = track(() => [d.proc.pid]);
    d.proc.once('exit', untrack);
    return d;
  };
  const replica: Replica = {
    index,
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    daemon: await launch(),
    logs: () => past + replica.daemon.stdout(),
    running: () => replica.daemon.proc.exitCode === null && replica.daemon.proc.signalCode === null,
    async kill9() {
      if (!replica.running()) return;
      const exited = new Promise((r) => replica.daemon.proc.once('close', r));
      replica.daemon.proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      await replica.daemon.stop();
    },
    async start(args = []) {
      if (replica.running()) throw new Error(`replica ${index} is running`);
      past += replica.daemon.stdout();
      replica.daemon = await launch(args);
    },
  };
  if (replica.daemon.url !== replica.url) throw new Error(`replica ${index} listens on ${replica.daemon.url}, not ${replica.url}`);
  return replica;
}

/** The JSON log lines of `event` in a replica's output. */
export function logEvents(logs: string, event: string): Record<string, unknown>[] {
  return logs
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
