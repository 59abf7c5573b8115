import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';

export const PROMETHEUS = '/usr/bin/prometheus';

/** Why the Prometheus test cannot run here, or null when it can (under CI a reason fails the run: requirement.ts). */
export function prometheusMissing(): string | null {
  const res = spawnSync(PROMETHEUS, ['--version'], { encoding: 'utf8' });
  return unmet(res.status === 0 ? null : `Prometheus is not installed (${PROMETHEUS}; Debian package prometheus)`);
}

export interface Prometheus {
  url: string;
  /** An instant query's vector: each series' labels and value. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  get(path: string): Promise<any>;
  stderr(): string;
  /** Stops Prometheus by its PID (SIGTERM, then SIGKILL) and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Debian's Prometheus on 127.0.0.1 scraping `targets` (host:port) every second, with the bearer token `token`
 * from a credentials file when given, and `rules` (a rule-file YAML) loaded. It reaches nothing but its targets: no
 * remote write, no Alertmanager, no service discovery.
 */
export async function startPrometheus(targets: string[], opts: { token?: string; rules?: string } = {}): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-prometheus-'));
  const port = await freePort();
  const lines = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', '  evaluation_interval: 1s'];
  if (opts.rules) {
    writeFileSync(join(dir, 'rules.yml'), opts.rules);
    lines.push('rule_files:', `  - ${join(dir, 'rules.yml')}`);
  }
  lines.push('scrape_configs:', '  - job_name: docsearch', '    metrics_path: /metrics');
  if (opts.token) {
    writeFileSync(join(dir, 'token'), opts.token, { mode: 0o600 });
    lines.push('    authorization:', `      credentials_file: ${join(dir, 'token')}`);
  }
  lines.push('    static_configs:', `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`);
  writeFileSync(join(dir, 'prometheus.yml'), `${lines.join('\n')}\n`);

  const proc: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) {
      process.kill(proc.pid, 'SIGTERM');
      const killer = setTimeout(() => proc.pid !== undefined && process.kill(proc.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const end = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited with ${proc.exitCode}:\n${err}`);
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`prometheus was not ready within 30 s:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const get = async (path: string) => {
    const res = await fetch(url + path);
    const body = (await res.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    get,
    async query(promql) {
      const data = (await get(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
      if (data.resultType !== 'vector') throw new Error(`${promql}: a ${data.resultType}, not a vector`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    stderr: () => err,
    stop,
  };
}
