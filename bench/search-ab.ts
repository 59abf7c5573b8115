/**
 * npm run bench:search-ab -- --base DIR [--chunks 1000000] [--queries 300] [--runs 3]
 *
 * One change to search, measured as an A/B through two real daemons: the build of another checkout (`--base`,
 * e.g. `git worktree add /tmp/base HEAD~1 && (cd /tmp/base && ln -s "$PWD/node_modules" . && npm run build)`)
 * and this checkout's, side by side on copies of the same kept library (bench/.cache/search, made by
 * `npm run bench:search -- --chunks N`). Queries that neither daemon has seen (SciFact test and train questions)
 * alternate between them, each new to both, the order flipped every query, so a drift in the machine's speed —
 * this VM's runs an hour apart differ by 1.5× — falls on both sides alike. Per run: p50/p95 latency at one client
 * (over HTTP with Node's fetch, which keeps its connection open; limit 10, hybrid, rerank off, as bench:search
 * measures), each daemon's CPU per query, and how many queries' top 10 differ between the two.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { api, removeDir, startDaemon, type Daemon, waitPreloaded } from '../test/helpers/daemon.js';
import { cpuMs, percentile } from './ingest-api.js';
import { linkTree } from './library-copy.js';
import { available, readSplit } from './scifact.js';

const REPO = resolve(import.meta.dirname, '..');
const LIBRARIES = join(REPO, 'bench/.cache/search');
const log = (m: string) => process.stderr.write(`${m}\n`);

const { values: argv } = parseArgs({
  options: {
    base: { type: 'string' },
    chunks: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '300' },
    runs: { type: 'string', default: '3' },
  },
});

/**
 * Until the daemon's startup preload is over, so that neither side's searches share the CPU with it: its health
 * says so, or (a build from before health reported it) its CPU rests — under 20 ms over a second.
 */
async function settled(d: Daemon): Promise<void> {
  const health = (await api(d, '/api/v1/health')).body as { components?: { search_index?: unknown } };
  if (health.components?.search_index) {
    await waitPreloaded(d);
    return;
  }
  for (let before = cpuMs(d.proc.pid!); ; ) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuMs(d.proc.pid!);
    if (now - before < 20) return;
    before = now;
  }
}

/** The newest kept library of `size` chunks with its vector index: what bench:search measured last. */
function keptLibrary(size: number): { dir: string; apiKey: string } {
  const kept = existsSync(LIBRARIES) ? readdirSync(LIBRARIES).filter((n) => n.startsWith(`${size}-`) && n.includes('-ann-')) : [];
  const metas = kept.map((n) => join(LIBRARIES, n, 'meta.json')).filter((m) => existsSync(m));
  const newest = metas.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`no kept library of ${size} chunks in ${LIBRARIES}: run npm run bench:search -- --chunks ${size} first`);
  return { dir: dirname(newest), apiKey: (JSON.parse(readFileSync(newest, 'utf8')) as { apiKey: string }).apiKey };
}

interface Side {
  name: 'base' | 'this';
  daemon: Daemon;
  latencies: number[];
  cpuMs: number;
}

async function search(side: Side, apiKey: string, query: string, record: boolean): Promise<string[]> {
  const c0 = cpuMs(side.daemon.proc.pid!);
  const t0 = performance.now();
  const res = await api(side.daemon, '/api/v1/search', { token: apiKey, body: { query, limit: 10, rerank: false } });
  if (res.status !== 200) throw new Error(`${side.name}: search failed: ${res.status} ${JSON.stringify(res.body)}`);
  if (record) {
    side.latencies.push(performance.now() - t0);
    side.cpuMs += cpuMs(side.daemon.proc.pid!) - c0;
  }
  return (res.body as { results: { chunk_id: string }[] }).results.map((r) => r.chunk_id);
}

async function main(): Promise<void> {
  if (!argv.base) throw new Error('--base DIR (another checkout, built) is required');
  const baseBin = join(resolve(argv.base), 'bin/docsearch');
  if (!existsSync(join(resolve(argv.base), 'dist/main.js'))) throw new Error(`${argv.base} has no build: run npm run build there`);
  if (!available()) {
    log('skipped: ../shared/eval/scifact is missing');
    return;
  }
  const size = Number(argv.chunks.replaceAll('_', ''));
  const n = Number(argv.queries);
  const lib = keptLibrary(size);
  log(`library ${lib.dir}`);
  const questions = [...readSplit('test'), ...readSplit('train')].map((q) => q.text);
  if (questions.length < Number(argv.runs) * n + 30) throw new Error(`only ${questions.length} questions: fewer --queries or --runs`);
  const args = ['--reranker', 'builtin', '--log-level', 'warn'];
  const rows: string[] = [];
  for (let run = 0; run < Number(argv.runs); run++) {
    const dirs = [mkdtempSync(join(LIBRARIES, '.run-')), mkdtempSync(join(LIBRARIES, '.run-'))] as const;
    const sides: Side[] = [];
    try {
      for (const d of dirs) linkTree(join(lib.dir, 'data'), d);
      sides.push({ name: 'base', daemon: await startDaemon({ dataDir: dirs[0], bin: baseBin, args, timeoutMs: 120_000 }), latencies: [], cpuMs: 0 });
      sides.push({ name: 'this', daemon: await startDaemon({ dataDir: dirs[1], args, timeoutMs: 120_000 }), latencies: [], cpuMs: 0 });
      for (const s of sides) await settled(s.daemon);
      // Warm-up on questions no run measures: the model, the tables and their caches.
      for (const q of questions.slice(-30)) for (const s of sides) await search(s, lib.apiKey, q, false);
      let differing = 0;
      for (const [i, q] of questions.slice(run * n, (run + 1) * n).entries()) {
        const order = i % 2 ? [sides[0]!, sides[1]!] : [sides[1]!, sides[0]!];
        const tops = new Map<string, string>();
        for (const s of order) tops.set(s.name, (await search(s, lib.apiKey, q, true)).join());
        if (tops.get('base') !== tops.get('this')) differing++;
      }
      const [b, t] = sides as [Side, Side];
      const f = (x: number) => x.toFixed(1);
      rows.push(
        `| ${run + 1} | ${f(percentile(b.latencies, 50))} → ${f(percentile(t.latencies, 50))} | ${f(percentile(b.latencies, 95))} → ${f(percentile(t.latencies, 95))} | ` +
          `${f(b.cpuMs / n)} → ${f(t.cpuMs / n)} | ${differing} of ${n} |`,
      );
      log(rows.at(-1)!);
    } finally {
      for (const s of sides) await s.daemon.stop();
      for (const d of dirs) removeDir(d);
    }
  }
  process.stdout.write(
    `\n${size.toLocaleString('en')} chunks, ${n} queries a run, base ${argv.base} → this checkout:\n\n` +
      '| run | p50 ms (1 client) | p95 ms | CPU ms/query | top 10 differing |\n|---|---|---|---|---|\n' +
      `${rows.join('\n')}\n`,
  );
}

await main();
