import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';

export const HAPROXY = '/usr/sbin/haproxy';

/** Why the load-balanced tests cannot run here, or null when they can. */
export function haproxyMissing(): string | null {
  const res = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
  return unmet(res.status === 0 ? null : `haproxy is not installed (${HAPROXY}; Debian package haproxy)`);
}

export interface LoadBalancer {
  url: string;
  pid: number | undefined;
  /** Stops haproxy (SIGTERM, then SIGKILL) and removes its folder. */
  stop(): Promise<void>;
}

/** haproxy's health check of each replica: its interval, and the failed or passed checks that change its state. */
export interface HealthCheck {
  interMs: number;
  fall: number;
  rise: number;
}

/** The tests' check: a replica that dies is out of rotation within about a second, and back once it answers. */
export const FAST_CHECK: HealthCheck = { interMs: 300, fall: 1, rise: 1 };

/** The check docs/scale-out.md gives operators (`check inter 1s fall 2 rise 2`). */
export const DOCUMENTED_CHECK: HealthCheck = { interMs: 1000, fall: 2, rise: 2 };

/**
 * The configuration the tests run: docs/scale-out.md's, on loopback, without TLS and `forwardfor`, with `check`
 * (test/e2e/scale-out-promises.test.ts holds the two to each other).
 */
export function haproxyConfig(backends: number[], port: number, check: HealthCheck): string {
  return [
    'global',
    '  maxconn 2000',
    '  tune.bufsize 49152',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 5m',
    '  timeout server 5m',
    '  retries 3',
    '  option redispatch',
    '  retry-on conn-failure',
    'frontend fe',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /api/v1/health',
    '  http-check expect status 200',
    ...backends.map((p, i) => `  server r${i} 127.0.0.1:${p} check inter ${check.interMs} fall ${check.fall} rise ${check.rise}`),
    '',
  ].join('\n');
}

/**
 * Debian's haproxy in front of replicas on 127.0.0.1, round robin, with an HTTP health check on
 * /api/v1/health (FAST_CHECK unless told). Requests a dead replica was holding fail (the client retries, as a
 * real one would); haproxy itself retries only connection failures, which never reached a daemon.
 */
export async function startHaproxy(backends: number[], opts: { port?: number; check?: HealthCheck } = {}): Promise<LoadBalancer> {
  const check = opts.check ?? FAST_CHECK;
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-haproxy-'));
  const port = opts.port ?? (await freePort());
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(backends, port, check));
  const proc: ChildProcess = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((res) => proc.once('exit', () => res()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
    try {
      await fetch(`${url}/api/v1/health`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${url}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    pid: proc.pid,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
