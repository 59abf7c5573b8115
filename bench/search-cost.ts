/**
 * npm run bench:search-cost [-- --abstracts 1000 --claims 150]
 *
 * What a new search costs the daemon beside what the model spends embedding its query (issue 58: at most 4×).
 * A daemon in the default configuration takes `--abstracts` SciFact abstracts through the API; once they are ready
 * and the daemon is idle, one client sends `--claims` SciFact test claims (hybrid, limit 10), each new to the daemon
 * (no query-vector cache hit), one after another: the daemon's CPU per search (all its threads, /proc), split by
 * thread role, and the stage times from /metrics. After each search the model alone, in this process, embeds its
 * claim as a query: the CPU the search cannot avoid. Prints both and their ratio.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';
import { addUser, api, removeDir, startDaemon, TEST_MODEL_CACHE, waitPreloaded } from '../test/helpers/daemon.js';
import { cpuMs, ingestThroughApi, percentile, threadCpuMs } from './ingest-api.js';
import { readCorpus, readSplit } from './scifact.js';

const { values: argv } = parseArgs({ options: { abstracts: { type: 'string', default: '1000' }, claims: { type: 'string', default: '150' } } });
const ABSTRACTS = Number(argv.abstracts);
const CLAIMS = Number(argv.claims);
const log = (m: string) => process.stderr.write(`${m}\n`);

/** The daemon's search stage sums from /metrics (seconds), by stage. */
async function stageSums(d: Awaited<ReturnType<typeof startDaemon>>): Promise<Map<string, number>> {
  const res = await fetch(`${d.url}/metrics`);
  const out = new Map<string, number>();
  if (!res.ok) return out;
  for (const m of (await res.text()).matchAll(/^docsearch_search_stage_duration_seconds_sum\{stage="([^"]+)"\} ([0-9.e+-]+)$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

const claims = readSplit('test').slice(0, CLAIMS).map((c) => c.text);
const d = await startDaemon();
try {
  const user = await addUser(d);
  await waitPreloaded(d);
  const files = readCorpus()
    .slice(0, ABSTRACTS)
    .map((x) => ({ name: `${x.id}.txt`, bytes: Buffer.from(`# ${x.title}\n\n${x.text}\n`) }));
  log(`ingesting ${files.length} abstracts…`);
  const ingest = await ingestThroughApi(d, user.apiKey, files, { onTick: (open, total) => process.stderr.write(`\r  ${open} of ${total} not ready yet   `) });
  process.stderr.write('\n');
  if (ingest.failed) throw new Error(`${ingest.failed} documents failed`);
  // Idle: the index upkeep after the last upload (optimize) and the backfill have finished when the daemon's CPU
  // stands still for two seconds.
  for (let last = cpuMs(d.proc.pid!); ; ) {
    await new Promise((r) => setTimeout(r, 2000));
    const now = cpuMs(d.proc.pid!);
    if (now - last < 50) break;
    last = now;
  }
  const search = async (query: string) => {
    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'hybrid', limit: 10 } });
    if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const model = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE });
  // Warm the daemon's paths (JIT, the first searches' index reads) and the model here on claims not measured.
  for (const c of readSplit('train').slice(0, 20)) await search(c.text);
  for (const c of readSplit('train').slice(20, 40)) await model.embed([c.text], { kind: 'query' });
  const pid = d.proc.pid!;
  const stages0 = await stageSums(d);
  const threads0 = threadCpuMs(pid);
  const cpu0 = cpuMs(pid);
  const wall: number[] = [];
  // Each search, then the model alone on its query: both are measured in the same minutes, so a drift in the
  // machine's speed (a VM's neighbours) moves both sides of the ratio alike.
  let modelUs = 0;
  for (const c of claims) {
    const t0 = performance.now();
    await search(c);
    wall.push(performance.now() - t0);
    const m0 = process.cpuUsage();
    await model.embed([c], { kind: 'query' });
    const m = process.cpuUsage(m0);
    modelUs += m.user + m.system;
  }
  const daemonMs = (cpuMs(pid) - cpu0) / claims.length;
  const threads1 = threadCpuMs(pid);
  const stages1 = await stageSums(d);
  const split = (k: 'main' | 'model' | 'lancedb') => (threads1[k] - threads0[k]) / claims.length;
  const modelMs = modelUs / 1000 / claims.length;
  await model.close();

  const stages = [...stages1].map(([k, v]) => `${k} ${(((v - (stages0.get(k) ?? 0)) * 1000) / claims.length).toFixed(2)}`).join(', ');
  console.log(`${ingest.documents} abstracts (${ingest.chunks} chunks) through the API; ${claims.length} SciFact test claims, hybrid, limit 10, one client`);
  console.log(`machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log(`daemon CPU per search: ${daemonMs.toFixed(2)} ms (main thread ${split('main').toFixed(2)}, LanceDB ${split('lancedb').toFixed(2)}, rest, the query's embedding among it, ${(daemonMs - split('main') - split('lancedb') - split('model')).toFixed(2)})`);
  console.log(`model CPU per query embedding: ${modelMs.toFixed(2)} ms`);
  console.log(`ratio: ${(daemonMs / modelMs).toFixed(2)}× (bar: 4×)`);
  console.log(`wall p50 ${percentile(wall, 50).toFixed(1)} ms, p95 ${percentile(wall, 95).toFixed(1)} ms; stage ms per search (wall, /metrics): ${stages}`);
} finally {
  d.proc.kill('SIGTERM');
  await new Promise((r) => d.proc.once('exit', r));
  removeDir(d.dataDir);
}
