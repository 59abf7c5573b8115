/**
 * npm run bench:queue
 *
 * The ingest queue's own cost per job, on each engine: BENCH_JOBS jobs (default 8,000) of BENCH_USERS users are
 * queued, then BENCH_CLAIMERS concurrent claimers (default 4; on PostgreSQL each on a pool of its own, as
 * replicas would be) claim and finish them all (JobStore.claim + DocumentStore.markReady, what a worker does
 * around the pipeline). Prints CPU-ms of this process per job (the client side: query building, the driver,
 * and on SQLite the database itself, which runs in-process) and wall time per job, plus the PostgreSQL server's
 * CPU for the run (its processes' utime+stime from /proc). The backlog is the point: a claim must not cost more
 * as the queue grows. Rewrites the "Ingest queue" section of docs/BENCHMARKS.md.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { systemClock } from '../src/core/clock.js';
import type { DatabaseHandle } from '../src/store/sql/database.js';
import { DocumentStore } from '../src/store/sql/documents.js';
import { JobStore } from '../src/store/sql/jobs.js';
import { openPostgres } from '../src/store/sql/postgres.js';
import { ProjectStore } from '../src/store/sql/projects.js';
import { openSqlite } from '../src/store/sql/sqlite.js';
import { UserStore } from '../src/store/sql/users.js';
import { removeDir } from '../test/helpers/daemon.js';
import { postgresUnavailable, startPostgres } from '../test/helpers/postgres.js';

const REPO = resolve(import.meta.dirname, '..');
const JOBS = Number(process.env.BENCH_JOBS ?? 8_000);
const USERS = Number(process.env.BENCH_USERS ?? 4);
const CLAIMERS = Number(process.env.BENCH_CLAIMERS ?? 4);
const log = (m: string) => process.stderr.write(`${m}\n`);

const TICK_MS = 10; // USER_HZ = 100

/** A process's CPU from /proc: its own utime+stime, plus its reaped children's when `children`. */
function cpuMs(pid: number, children: boolean): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) * TICK_MS;
  } catch {
    return 0; // gone meanwhile
  }
}

/** The PostgreSQL server's CPU so far: the postmaster, the backends it reaped, and its live backends. */
function serverCpuMs(postmaster: number | undefined): number {
  if (postmaster === undefined) return 0;
  let total = cpuMs(postmaster, true);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === postmaster) total += cpuMs(Number(name), false);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function run(engine: string, open: () => Promise<DatabaseHandle>, postmaster?: number): Promise<string> {
  const main = await open();
  const now = systemClock;
  let k = 0;
  for (let u = 0; u < USERS; u++) {
    const userId = (await new UserStore(main.db, now).create(`bench${u}@example.com`, 'h'))!.id;
    const project = await new ProjectStore(main.db, now).ensureDefault(userId);
    const documents = new DocumentStore(main.db, new JobStore(main.db, now), now);
    for (let i = 0; i < JOBS / USERS; i++) {
      await documents.createQueued({ userId, projectId: project.id, filename: `${i}.txt`, contentType: 'text/plain', sizeBytes: 1, sha256: String(++k).padStart(64, '0'), metadata: {} });
    }
  }
  const handles = engine === 'sqlite' ? [main] : [main, ...(await Promise.all(Array.from({ length: CLAIMERS - 1 }, open)))];
  const serverBefore = serverCpuMs(postmaster);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CLAIMERS }, async (_, i) => {
      const h = handles[i % handles.length]!;
      const jobs = new JobStore(h.db, now);
      const documents = new DocumentStore(h.db, jobs, now);
      for (let job = await jobs.claim(`bench-${i}`, 60_000); job; job = await jobs.claim(`bench-${i}`, 60_000)) {
        await documents.markReady(job.documentId, job, { chunkCount: 1, pages: null, warnings: [], embedderId: 'bench' });
        done++;
      }
    }),
  );
  const wall = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const server = serverCpuMs(postmaster) - serverBefore;
  for (const h of new Set(handles)) await h.close();
  if (done !== JOBS) throw new Error(`${engine}: ${done} of ${JOBS} jobs finished`);
  const row = `| ${engine} | ${JOBS.toLocaleString('en')} | ${CLAIMERS} | ${((used.user + used.system) / 1000 / JOBS).toFixed(2)} | ${engine === 'sqlite' ? '(in-process)' : (server / JOBS).toFixed(2)} | ${(wall / JOBS).toFixed(2)} |`;
  log(row);
  return row;
}

const dir = mkdtempSync(join(tmpdir(), 'docsearch-bench-queue-'));
const rows = [await run('sqlite', () => openSqlite(join(dir, 'docsearch.db')))];
const noPostgres = postgresUnavailable();
if (noPostgres) log(`PostgreSQL skipped: ${noPostgres}`);
else {
  const cluster = await startPostgres();
  try {
    const url = await cluster.createDatabase();
    rows.push(await run('postgresql', () => openPostgres(url), cluster.pid()));
  } finally {
    await cluster.destroy();
  }
}
removeDir(dir);

const section = `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'} (${availableParallelism()} cores), load average ${loadavg()[0]!.toFixed(1)} at the end: \`npm run bench:queue\` (BENCH_JOBS=${JOBS}, BENCH_USERS=${USERS}, BENCH_CLAIMERS=${CLAIMERS}). All jobs are queued first, then claimed and finished; a job's claim plus its ready transaction, without the pipeline. PostgreSQL 15 runs locally with fsync off (the test cluster), so its figures are CPU, not durability.

| engine | jobs | claimers | client CPU-ms / job | server CPU-ms / job | wall ms / job |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
process.stdout.write(`\n${section}\n`);
const bm = join(REPO, 'docs/BENCHMARKS.md');
const doc = readFileSync(bm, 'utf8');
writeFileSync(bm, /\n## Ingest queue\n/.test(doc) ? doc.replace(/## Ingest queue\n[\s\S]*?(?=\n## |$)/, `## Ingest queue\n\n${section}`) : `${doc.trimEnd()}\n\n## Ingest queue\n\n${section}`);
