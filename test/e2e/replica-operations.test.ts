/**
 * Two shared-mode replicas run as the docs run them — each started with the documented unit's ExecStart (README.md,
 * docs/scale-out.md) and the settings of scale-out.md's /etc/docsearch/env — on a real PostgreSQL 15 and Ceph RGW,
 * behind haproxy:
 *
 * - the upgrade docs/operations.md describes, on the library docsearch 0.1.0 wrote (test/fixtures/upgrade): backed
 *   up first, then both replicas of the new release started at once, which migrate it once and serve it as the
 *   release did; a replica whose build is older than the library (an old one started after the upgrade) is refused
 *   with exit 3, while one already running goes on without noticing — why the steps stop the old release first;
 * - `docsearch upload --sync --wait` through the load balancer while a replica is killed (SIGKILL) with an upload
 *   in flight on it: the client asks again, says so once, and every file is accepted exactly once.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_SCHEMA } from '../../src/store/sql/migrations/index.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, BIN, type Daemon, removeDir, REPO, runCli, startDaemon, TEST_MODEL_CACHE, type TestUser } from '../helpers/daemon.js';
import { documentedDataDir } from '../helpers/documented-data-dir.js';
import { readmeUnit, serveFlags } from '../helpers/documented-unit.js';
import { type LoadBalancer, startHaproxy } from '../helpers/haproxy.js';
import { freePort } from '../helpers/ports.js';
import { type PgCluster, startPostgres } from '../helpers/postgres.js';
import { expectReleaseAnswers, loadSharedFixture, PREFIX, recorded } from '../helpers/release-fixture.js';
import { type Rgw, startRgw } from '../helpers/rgw.js';
import { topologyUnavailable } from '../helpers/topology.js';
import { observe } from '../helpers/upgrade-library.js';
import { corpus } from '../helpers/uploads.js';
import { waitFor } from '../ingest/pipeline/helpers.js';

const SKIP = topologyUnavailable();
const MINUTE = 60_000;
/** The oldest release's library: today's build has migrations it lacks. */
const RELEASE = 'v0.1.0';
/** As the next release would name its first migration. */
const NEWER_MIGRATION = `${String(KNOWN_SCHEMA + 1).padStart(3, '0')}-from-a-newer-release`;

/** The variables of scale-out.md's /etc/docsearch/env. */
function documentedEnvKeys(): string[] {
  const text = readFileSync(join(REPO, 'docs/scale-out.md'), 'utf8');
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.startsWith('DOCSEARCH_DATABASE_URL='))!;
  return block
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.slice(0, l.indexOf('=')))
    .sort();
}

interface Instance {
  port: number;
  daemon?: Daemon;
}

describe.skipIf(SKIP !== null)(`two replicas as the docs run them (PostgreSQL + RGW + haproxy)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const unit = readmeUnit();
  /** Stands for /var/lib/docsearch: StateDirectory=docsearch/%i, mode 0700, as systemd makes it. */
  const stateRoot = mkdtempSync(join(tmpdir(), 'docsearch-state-'));
  let cluster: PgCluster;
  let rgw: Rgw;
  let lb: LoadBalancer | undefined;
  let db: pg.Pool;
  let env: Record<string, string>;
  const replicas: Instance[] = [];

  /** The flags the unit starts instance `port` with, and its data dir. */
  const unitFlags = (port: number) => serveFlags(unit, String(port), stateRoot);
  const start = async (r: Instance) => {
    mkdirSync(join(stateRoot, String(r.port)), { recursive: true, mode: 0o700 });
    // Beyond the unit: the jobs the killed replica held pass to the other after a 20 s lease instead of the default
    // 2 min (--job-lease), the same takeover sooner.
    const args = [...unitFlags(r.port), '--job-lease', '20'];
    r.daemon = await startDaemon({ dataDir: join(stateRoot, String(r.port)), databaseUrl: env.DOCSEARCH_DATABASE_URL, env, args, timeoutMs: 2 * MINUTE });
    return r.daemon;
  };
  const migrations = async () => (await db.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')).rows.map((r) => r.name);

  beforeAll(async () => {
    [cluster, rgw] = await Promise.all([startPostgres(), startRgw()]);
    const databaseUrl = await cluster.createDatabase();
    await loadSharedFixture(RELEASE, databaseUrl, rgw);
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    for (let i = 0; i < 2; i++) replicas.push({ port: await freePort() });
    const lbPort = await freePort();
    // /etc/docsearch/env as scale-out.md shows it, for this machine.
    env = {
      DOCSEARCH_DATABASE_URL: databaseUrl,
      DOCSEARCH_STORAGE: `s3://${rgw.bucket}/${PREFIX}`,
      ...rgw.env(),
      DOCSEARCH_PUBLIC_URL: `http://127.0.0.1:${lbPort}`,
      DOCSEARCH_TRUST_PROXY: 'true',
      DOCSEARCH_MODEL_THREADS: '1',
    };
    expect(Object.keys(env).sort(), 'the settings scale-out.md puts in /etc/docsearch/env').toEqual(documentedEnvKeys());
    lb = await startHaproxy(
      replicas.map((r) => r.port),
      { port: lbPort },
    );
  }, 10 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const r of replicas) process.stderr.write(`--- replica on ${r.port}, last log lines:\n${(r.daemon?.stdout() ?? '').split('\n').slice(-40).join('\n')}\n${r.daemon?.stderr() ?? ''}\n`);
  });
  afterAll(async () => {
    for (const r of replicas) await r.daemon?.stop();
    await lb?.stop();
    await db?.end();
    await rgw?.stop();
    await cluster?.destroy();
    removeDir(stateRoot);
  }, 5 * MINUTE);

  it('upgrades as docs/operations.md says: backed up, both replicas started at once migrate the library once and serve it as the release did; an old build started after is refused, one still running does not notice', async () => {
    const then = recorded(RELEASE, 'shared');
    expect((await migrations()).length, 'the release’s library lacks migrations').toBeLessThan(KNOWN_SCHEMA);

    // 1. Back up first (the old release's replicas stopped: none runs here).
    const keyFile = join(mkdtempSync(join(tmpdir(), 'docsearch-key-')), 'backup.key');
    const repo = mkdtempSync(join(tmpdir(), 'docsearch-upgrade-backup-'));
    try {
      const backup = await runCli(['backup', '--to', repo, '--key-file', keyFile, '--json'], { env, timeoutMs: 5 * MINUTE });
      expect(backup.code, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout).files.total).toBeGreaterThan(0);
    } finally {
      removeDir(repo);
      removeDir(join(keyFile, '..'));
    }

    // 2-4. The new release's replicas, started together: one migrates, the other waits on its lock.
    await Promise.all(replicas.map(start));
    const applied = await migrations();
    expect(new Set(applied).size, 'each migration applied once').toBe(applied.length);
    expect(Number.parseInt(applied.at(-1)!, 10)).toBe(KNOWN_SCHEMA);
    await waitFor(async () => (await api({ url: lb!.url } as Daemon, '/api/v1/health')).status === 200, MINUTE, 'the load balancer serving');
    expectReleaseAnswers(RELEASE, await observe(lb!.url, then.users), then);
    // A migration can be planned while the replicas serve: its dry run only reads (test/admin/migrate-dry-run.test.ts).
    const planned = await runCli(['migrate', '--from-database', env.DOCSEARCH_DATABASE_URL!, '--from-storage', env.DOCSEARCH_STORAGE!, '--to', join(stateRoot, 'planned'), '--dry-run', '--json'], { env, timeoutMs: 2 * MINUTE });
    expect(planned.code, planned.stderr).toBe(0);
    expect(JSON.parse(planned.stdout)).toMatchObject({ dry_run: true, target_state: 'fresh' });

    // A build older than the library (what an old replica is once the new release has migrated): refused at start,
    // exit 3, which the unit does not restart; a replica that was already running goes on serving, unaware.
    expect(unit).toMatch(/^RestartPreventExitStatus=.*\b3\b/m);
    const [r0, r1] = replicas as [Instance, Instance];
    expect(await r1.daemon!.stop()).toBe(0);
    await db.query('INSERT INTO kysely_migration (name, timestamp) VALUES ($1, $2)', [NEWER_MIGRATION, new Date().toISOString()]);
    try {
      const old = await runCli(['serve', '--model-cache-dir', TEST_MODEL_CACHE, ...unitFlags(r1.port)], { env, timeoutMs: 2 * MINUTE });
      expect(old.code, old.stderr).toBe(3);
      expect(old.stderr).toMatch(/this library was written by a newer docsearch/);
      const search = await api(r0.daemon!, '/api/v1/search', { token: then.users[0]!.apiKey, body: { query: 'paid annual leave', limit: 3 } });
      expect(search.status, 'the replica already running did not check again').toBe(200);
    } finally {
      await db.query('DELETE FROM kysely_migration WHERE name = $1', [NEWER_MIGRATION]);
    }
    await start(r1);
  }, 15 * MINUTE);

  it('upload --sync --wait through the load balancer rides through a replica killed with an upload in flight: every file accepted exactly once', async () => {
    // Each replica serving (they are, after the upgrade test; started here when it is left out).
    for (const r of replicas) if (!r.daemon || r.daemon.proc.exitCode !== null || r.daemon.proc.signalCode !== null) await start(r);
    const [r0, victim] = replicas as [Instance, Instance];
    const user: TestUser = await addUser(r0.daemon!);
    const folder = mkdtempSync(join(tmpdir(), 'docsearch-sync-kill-'));
    const { files } = corpus(100);
    for (const f of files) writeFileSync(join(folder, f.name), f.bytes);

    const cli = spawn(process.execPath, [BIN, 'upload', folder, '--sync', '--wait', '--project', 'kill9', '--create-project', '--json'], {
      env: { ...process.env, ...cliEnv(null, { DOCSEARCH_URL: lb!.url, DOCSEARCH_TOKEN: user.apiKey }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    cli.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => cli.once('exit', res));

    // An upload in flight on the victim: the files it is receiving, in its temp folder (shared mode: <data-dir>/tmp).
    const incoming = join(victim.daemon!.dataDir, 'tmp');
    const inFlight = () => {
      try {
        return readdirSync(incoming).length > 0;
      } catch {
        return false;
      }
    };
    let caught = false;
    while (cli.exitCode === null) {
      if (inFlight()) {
        victim.daemon!.proc.kill('SIGKILL');
        caught = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(caught, `no upload was ever in flight on the victim before the CLI ended:\n${stderr}`).toBe(true);
    await new Promise((r) => victim.daemon!.proc.once('exit', r));
    // As systemd would after RestartSec=2.
    await new Promise((r) => setTimeout(r, 2000));
    await start(victim);

    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 8 * MINUTE))]);
    expect(code, stderr).toBe(0);
    expect(stderr.match(/warning: lost contact with http:\/\/127\.0\.0\.1:\d+ \([^)]+\); retrying for up to 60 s…/g), stderr).toHaveLength(1);
    const out = JSON.parse(stdout) as { sync: { counts: Record<string, number> }; failed: unknown[] };
    expect(out.sync.counts).toMatchObject({ new: files.length, failed: 0 });
    expect(out.failed).toEqual([]);

    // Exactly once: one ready document per file, at its path, with its bytes.
    const docs: { path: string; sha256: string; status: string }[] = [];
    let cursor: string | null = null;
    do {
      const page = await api({ url: lb!.url } as Daemon, `/api/v1/documents?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: user.apiKey });
      expect(page.status).toBe(200);
      docs.push(...page.body.documents);
      cursor = page.body.next_cursor ?? null;
    } while (cursor);
    expect(docs.map((d) => d.path).sort()).toEqual(files.map((f) => f.name).sort());
    const sha = new Map(files.map((f) => [f.name, createHash('sha256').update(f.bytes).digest('hex')]));
    for (const d of docs) {
      expect(d.sha256).toBe(sha.get(d.path));
      expect(d.status).toBe('ready');
    }
    // What a replica keeps in its data dir is what docs/configuration.md lists.
    const listed = documentedDataDir().map((e) => e.name);
    for (const r of replicas) for (const entry of readdirSync(r.daemon!.dataDir).filter((e) => e !== 'config-home')) expect(listed, `${entry} in a replica's data dir`).toContain(entry);
  }, 15 * MINUTE);
});
