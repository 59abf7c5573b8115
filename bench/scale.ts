/**
 * Shared mode against embedded (npm run bench:scale), through real daemons (built binary, built-in model):
 *
 * 1. embedded: one daemon (SQLite, local LanceDB), `--uploads` SciFact abstracts (default 1,000) sent one per
 *    request by 4 clients; the daemon's CPU-ms per chunk; then hybrid search p50/p95 (SciFact test queries);
 * 2. shared: `--replicas` daemons (default 3) on PostgreSQL 15 + Ceph RGW behind haproxy (test/helpers/topology.ts)
 *    with the health check docs/scale-out.md gives (every second; the tests check every 300 ms),
 *    the same uploads through haproxy; CPU-ms per chunk of the replicas together, and of PostgreSQL and RGW beside
 *    it; search p50/p95 through haproxy; the time for a document that turned ready through one replica to be
 *    returned by a search on each other one (`--probes` documents, each read by every other replica);
 * 3. shared, under failure: the uploads again into a new project while replica 1 is killed with SIGKILL `--kills`
 *    times (default 3) and started again; counts lost, duplicated and stuck documents (all must be 0) and the time
 *    until every document is ready (a dead replica's jobs come back when their 2-minute leases expire).
 *
 * Search is measured twice in each mode: right after the uploads are ready (caches cold, upkeep still compacting),
 * with the SciFact test queries; and settled, after `--warmup` searches (default 300) with SciFact train queries, as
 * a library that has been in use for a while answers, with further train queries. Each measured query is new to
 * the daemon that answers it (a daemon keeps the vectors of queries it has embedded), in both modes.
 *
 * CPU time comes from /proc (user + system, every thread), so it means something on a busy machine; wall times
 * and latencies do not. A short check: `--uploads 60 --probes 6 --kills 1 --searches 40`.
 *
 * The replicas share this machine, so each one's model gets `--model-threads` = cores / replicas (at least 1), as
 * docs/scale-out.md advises: with a thread per core each, 3 replicas on 2 cores spent ~12 % more CPU per passage.
 * `-- --model-threads cores` measures that case.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../test/helpers/daemon.js';
import { DOCUMENTED_CHECK } from '../test/helpers/haproxy.js';
import { type Replica, startTopology, topologyUnavailable } from '../test/helpers/topology.js';
import { corpus, settled, type TextFile, timeToVisible, uploadOne, uploadWhileKilling } from '../test/helpers/uploads.js';
import { cpuMs, documentTotals, percentile, searchLatencies } from './ingest-api.js';
import { available as scifactAvailable, readSplit } from './scifact.js';

const { values } = parseArgs({
  options: {
    uploads: { type: 'string', default: '1000' },
    replicas: { type: 'string', default: '3' },
    kills: { type: 'string', default: '3' },
    probes: { type: 'string', default: '30' },
    searches: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '300' },
    // Replicas on one machine split its cores (docs/scale-out.md); `cores` gives each one a thread per core.
    'model-threads': { type: 'string', default: 'split' },
  },
});
const UPLOADS = Number(values.uploads);
const REPLICAS = Number(values.replicas);
const KILLS = Number(values.kills);
const PROBES = Number(values.probes);
const SEARCHES = Number(values.searches);
const WARMUP = Number(values.warmup);
const MODEL_THREADS = values['model-threads'] === 'cores' ? availableParallelism() : values['model-threads'] === 'split' ? Math.max(1, Math.floor(availableParallelism() / REPLICAS)) : Number(values['model-threads']);

const at = (url: string) => ({ url }) as Daemon;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** CPU ms of processes and their children (PostgreSQL's backends), as pid → ms, for deltas over a run. */
function treeCpu(roots: (number | undefined)[]): Map<number, number> {
  const wanted = new Set(roots.filter((p): p is number => p !== undefined));
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (wanted.has(pid) || wanted.has(ppid)) out.set(pid, cpuMs(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const cpuSince = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((n, [pid, v]) => n + v - (before.get(pid) ?? 0), 0);

/**
 * CPU ms of daemons' threads, by kind: the main thread (JavaScript, HTTP, the database driver), LanceDB's (tokio),
 * and the rest (the model's pool, libuv's, V8's). Threads that ended count only in the process's total.
 */
function threadCpu(pids: (number | undefined)[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of pids) {
    if (pid === undefined) continue;
    let live = 0;
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ms = (Number(f[11]) + Number(f[12])) * 10;
        // On Node 20 the model's, libuv's and V8's threads are all named `node`.
        const kind = tid === String(pid) ? 'main' : /^tokio|^lance/.test(name) ? 'lancedb' : 'model, libuv, V8';
        out.set(kind, (out.get(kind) ?? 0) + ms);
        live += ms;
      }
      out.set('ended threads', (out.get('ended threads') ?? 0) + cpuMs(pid) - live);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const threadsSince = (before: Map<string, number>, after: Map<string, number>, chunks: number) =>
  [...after]
    .map(([kind, v]) => [kind, (v - (before.get(kind) ?? 0)) / chunks] as const)
    .filter(([, v]) => v >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, v]) => `${kind} ${v.toFixed(1)}`)
    .join(', ');

/** Uploads every file through `url` with 4 clients, one file per request. */
async function uploadAll(url: string, token: string, projectId: string, files: TextFile[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < files.length; i = next++) await uploadOne(url, token, files[i]!, projectId);
    }),
  );
}

async function newProject(url: string, token: string, name: string): Promise<string> {
  const res = await api(at(url), '/api/v1/projects', { token, body: { name } });
  if (res.status !== 201) throw new Error(`creating a project answered ${res.status}`);
  return res.body.id as string;
}

/** Embedded mode's documents: polled through the API until none is queued or processing; their chunk total. */
async function embeddedChunks(d: Daemon, token: string): Promise<{ chunks: number; failed: number }> {
  const open = async (status: string) => ((await api(d, `/api/v1/documents?limit=100&status=${status}`, { token })).body.documents as unknown[]).length;
  while ((await open('queued')) + (await open('processing')) > 0) await new Promise((r) => setTimeout(r, 2000));
  return documentTotals(d, token);
}

async function main(): Promise<void> {
  const unavailable = topologyUnavailable();
  if (unavailable) {
    say(`bench:scale needs PostgreSQL 15, Ceph RGW and haproxy: ${unavailable}`);
    process.exitCode = 1;
    return;
  }
  const { files, source } = corpus(UPLOADS);
  const queries = scifactAvailable() ? readSplit('test').map((q) => q.text) : files.map((f) => f.bytes.toString().split('\n')[0]!.slice(2));
  const warmQueries = scifactAvailable() ? readSplit('train').map((q) => q.text) : files.map((f) => f.bytes.toString().split('\n')[1]!.slice(0, 200));
  /**
   * Search latencies right after ingestion, then settled: after WARMUP searches with other queries on each process
   * (`warm`: the replicas, each asked directly, since each has caches of its own; through haproxy a replica would
   * see a third of them).
   */
  const searchTwice = async (d: Daemon, token: string, warm: Daemon[] = [d]) => {
    const cold = await searchLatencies(d, token, queries, SEARCHES);
    for (const w of warm) await searchLatencies(w, token, warmQueries.slice(0, WARMUP), WARMUP);
    return { cold, settled: await searchLatencies(d, token, warmQueries.slice(WARMUP), SEARCHES) };
  };
  const ratio = (what: string, shared: number[], embedded: number[]) =>
    `${what} p50 ${ms(percentile(shared, 50))}, p95 ${ms(percentile(shared, 95))} = ` +
    `${(percentile(shared, 50) / percentile(embedded, 50)).toFixed(2)}× / ${(percentile(shared, 95) / percentile(embedded, 95)).toFixed(2)}× embedded`;
  say(`bench:scale: ${cpus()[0]?.model ?? 'cpu'}, ${availableParallelism()} cores, Node ${process.version}, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  say(`${files.length} ${source}, 4 clients, one file per request; ${SEARCHES} hybrid searches (limit 10), one at a time\n`);

  // 1. Embedded.
  const d = await startDaemon({ timeoutMs: 120_000 });
  let embedded: { cpuPerChunk: number; chunks: number; threads: string; seconds: number; search: { cold: number[]; settled: number[] } };
  try {
    const user = await addUser(d);
    const projectId = await newProject(d.url, user.apiKey, 'scale');
    const cpu0 = cpuMs(d.proc.pid!);
    const threads0 = threadCpu([d.proc.pid]);
    const t0 = performance.now();
    await uploadAll(d.url, user.apiKey, projectId, files);
    const { chunks, failed } = await embeddedChunks(d, user.apiKey);
    if (failed > 0) throw new Error(`${failed} documents failed in embedded mode`);
    const cpu = cpuMs(d.proc.pid!) - cpu0;
    const threads = threadsSince(threads0, threadCpu([d.proc.pid]), chunks);
    embedded = { cpuPerChunk: cpu / chunks, chunks, threads, seconds: (performance.now() - t0) / 1000, search: await searchTwice(d, user.apiKey) };
  } finally {
    await d.stop();
    removeDir(d.dataDir);
  }
  say(`embedded: ${embedded.chunks} chunks in ${embedded.seconds.toFixed(0)} s, ${embedded.cpuPerChunk.toFixed(1)} CPU-ms/chunk (daemon)`);
  say(`embedded: by thread, CPU-ms/chunk: ${embedded.threads}`);
  say(`embedded: search right after ingestion p50 ${ms(percentile(embedded.search.cold, 50))}, p95 ${ms(percentile(embedded.search.cold, 95))}`);
  say(`embedded: search settled p50 ${ms(percentile(embedded.search.settled, 50))}, p95 ${ms(percentile(embedded.search.settled, 95))}\n`);

  // 2. Shared.
  say(`shared: each replica's model uses ${MODEL_THREADS} thread${MODEL_THREADS === 1 ? '' : 's'} (--model-threads; the embedded daemon ${availableParallelism()}, one per core)`);
  const topo = await startTopology({ replicas: REPLICAS, args: ['--model-threads', String(MODEL_THREADS)], check: DOCUMENTED_CHECK });
  const db = new pg.Pool({ connectionString: topo.databaseUrl, max: 2 });
  try {
    const owner = await addUser(topo.replicas[0]!.daemon);
    const token = owner.apiKey;
    const projectId = await newProject(topo.lb.url, token, 'scale');
    const daemonPids = () => topo.replicas.map((r: Replica) => r.daemon.proc.pid);
    const replicas0 = treeCpu(daemonPids());
    const threads0 = threadCpu(daemonPids());
    const infra0 = treeCpu([topo.pg.pid(), ...topo.rgw.pids()]);
    const t0 = performance.now();
    await uploadAll(topo.lb.url, token, projectId, files);
    const by = await settled(db, projectId, files.length);
    if (by.ready !== files.length) throw new Error(`shared mode: ${JSON.stringify(by)}`);
    const seconds = (performance.now() - t0) / 1000;
    const replicasCpu = cpuSince(replicas0, treeCpu(daemonPids()));
    const threads1 = threadCpu(daemonPids());
    const infraCpu = cpuSince(infra0, treeCpu([topo.pg.pid(), ...topo.rgw.pids()]));
    const { rows } = await db.query<{ n: string }>('SELECT sum(chunk_count) AS n FROM documents WHERE project_id = $1', [projectId]);
    const chunks = Number(rows[0]!.n);
    const perChunk = replicasCpu / chunks;
    say(`shared (${REPLICAS} replicas, PostgreSQL + RGW, haproxy checking each every ${DOCUMENTED_CHECK.interMs} ms): ${chunks} chunks in ${seconds.toFixed(0)} s`);
    say(
      `shared: ${perChunk.toFixed(1)} CPU-ms/chunk (replicas together) = ${(perChunk / embedded.cpuPerChunk).toFixed(2)}× embedded (goal ≤ 1.15×); ` +
        `PostgreSQL + RGW beside them ${(infraCpu / chunks).toFixed(1)} CPU-ms/chunk (${((perChunk + infraCpu / chunks) / embedded.cpuPerChunk).toFixed(2)}× with them)`,
    );
    say(`shared: by thread, CPU-ms/chunk (replicas together): ${threadsSince(threads0, threads1, chunks)}`);
    const search = await searchTwice(at(topo.lb.url), token, topo.replicas.map((r) => at(r.url)));
    say(`shared: ${ratio('search through haproxy right after ingestion', search.cold, embedded.search.cold)}`);
    say(`shared: ${ratio(`search through haproxy settled (after ${WARMUP} others on each replica)`, search.settled, embedded.search.settled)} (goal ≤ 2×)`);

    const visibility = await newProject(topo.lb.url, token, 'visibility');
    const delays: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const writer = topo.replicas[i % REPLICAS]!;
      delays.push(...(await timeToVisible({ db, token, projectId: visibility, writer, readers: topo.replicas.filter((x) => x !== writer), tag: String(i), limitMs: 60_000 })));
    }
    say(
      `shared: ready on one replica → found by a search on another: p50 ${ms(percentile(delays, 50))}, p95 ${ms(percentile(delays, 95))}, ` +
        `max ${ms(Math.max(...delays))} (${delays.length} reads of ${PROBES} documents; goal p95 ≤ 2000 ms)\n`,
    );

    // 3. Under failure.
    if (KILLS > 0) {
      const killed = await newProject(topo.lb.url, token, 'kill -9');
      const t1 = performance.now();
      const killAt = Array.from({ length: KILLS }, (_, k) => (k + 0.5) / (KILLS + 0.5));
      const { results, heldAtKill } = await uploadWhileKilling({
        topo,
        db,
        token,
        projectId: killed,
        files,
        victim: topo.replicas[1 % REPLICAS]!,
        killAt,
        onKill: (held) => process.stderr.write(`  kill -9 of replica ${1 % REPLICAS} (jobs it held so far: ${held})\n`),
      });
      const uploadedS = (performance.now() - t1) / 1000;
      const status = await settled(db, killed, files.length);
      const settledS = (performance.now() - t1) / 1000;
      const { rows: docs } = await db.query<{ id: string; sha256: string }>('SELECT id, sha256 FROM documents WHERE project_id = $1', [killed]);
      const { rows: stuck } = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM jobs j JOIN documents d ON d.id = j.document_id WHERE d.project_id = $1 AND j.state <> 'done'",
        [killed],
      );
      const accepted = new Set([...results.values()].map((x) => x.id));
      const lost = [...accepted].filter((id) => !docs.some((x) => x.id === id)).length + (files.length - results.size);
      const duplicated = docs.length - new Set(docs.map((x) => x.sha256)).size;
      const retried = [...results.values()].filter((x) => x.attempts > 1).length;
      say(
        `under failure: ${files.length} uploads while replica ${1 % REPLICAS} was killed with SIGKILL ${KILLS}× (holding ${heldAtKill.length} jobs in all): ` +
          `${lost} lost, ${duplicated} duplicated, ${Number(stuck[0]!.n)} stuck, ${status.ready ?? 0} ready, ${status.failed ?? 0} failed; ` +
          `${retried} uploads retried in flight; uploads done after ${uploadedS.toFixed(0)} s, every document ready after ${settledS.toFixed(0)} s (leases: 2 min)`,
      );
    }
  } catch (err) {
    // The replicas' logs say what a failed request met; they live only in this process until then.
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-scale-logs-'));
    for (const r of topo.replicas) writeFileSync(join(dir, `replica-${r.index}.log`), r.logs());
    say(`the replicas' logs: ${dir}`);
    throw err;
  } finally {
    await db.end();
    await topo.stop();
  }
}

await main();
