/**
 * Built-in embedder throughput and latency (npm run bench:embed).
 *
 * - passages/s for 256-token passages, embedded in the embedder's own micro-batches (16);
 * - single-query latency (p50/p95) with the model warm and nothing else queued;
 * - peak RSS of the whole process (the onnxruntime worker thread included: VmHWM);
 * - achieved FLOP/s against this CPU's FP32 peak, taking all-MiniLM-L6-v2 ≈ 6.0 GFLOP per 256-token passage
 *   and peak = cores × GHz × 32 FLOP/cycle (AVX2: two 8-wide FMA units × 2 FLOP). On CPUs with AVX-512
 *   the hardware peak may be up to 2× higher; the ratio stays against the AVX2 figure the targets use.
 *
 * `--write` replaces the "## Embedding" section of docs/BENCHMARKS.md with the results; `--spin` turns on
 * onnxruntime's busy-waiting (off in the daemon).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';

const PASSAGES = Number(process.env.BENCH_PASSAGES ?? 128);
const QUERIES = 60;
const GFLOP_PER_PASSAGE = 6.0;
const FLOP_PER_CYCLE = 32;

const WORDS = (
  'search index vector ranking document query passage model token embedding retrieval relevance ' +
  'the of and to in is for on with as by at from that this be are was were it an or which their ' +
  'protein cell gene expression patients clinical study results increased reduced significant ' +
  'network memory latency throughput database storage encryption authentication server client'
).split(' ');

/** Deterministic pseudo-random prose, long enough to be truncated at 256 tokens. */
function passage(seed: number, words: number): string {
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(WORDS[x % WORDS.length]!);
    if (i % 17 === 16) out.push('.');
  }
  return out.join(' ');
}

function cpu(): { model: string; ghz: number; cores: number; avx2: boolean; avx512: boolean } {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name: string): string => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(info)?.[1]?.trim() ?? '';
  const flags = field('flags').split(' ');
  let mhz = Number(field('cpu MHz'));
  try {
    // Prefer the nominal maximum when cpufreq exposes it; /proc/cpuinfo shows the current clock.
    mhz = Number(readFileSync('/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq', 'utf8')) / 1000;
  } catch {
    // no cpufreq in most VMs: keep the cpuinfo figure
  }
  return {
    model: field('model name'),
    ghz: mhz / 1000,
    cores: availableParallelism(),
    avx2: flags.includes('avx2'),
    avx512: flags.includes('avx512f'),
  };
}

function peakRssMb(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kb ? Number(kb) / 1024 : process.memoryUsage().rss / 1048576;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

const machine = cpu();
const load = loadavg()[0]!;
const spinWait = process.argv.includes('--spin');
const embedder = new BuiltinEmbedder({ modelCacheDir: join(import.meta.dirname, '.cache', 'models'), spinWait });
const t0 = performance.now();
await embedder.init();
const initMs = performance.now() - t0;

const texts = Array.from({ length: PASSAGES }, (_, i) => passage(i, 260));
const tokenCounts = texts.map((t) => Math.min(embedder.tokenizer.count(t), embedder.maxTokens));
if (tokenCounts.some((n) => n !== 256)) throw new Error('bench passages must all be 256 tokens after truncation');

// Warm-up: first runs allocate onnxruntime's arenas and page the weights in.
await embedder.embed(texts.slice(0, 16), { kind: 'passage' });
await embedder.embed(['warm-up query'], { kind: 'query' });

const tp = performance.now();
const cpu0 = process.cpuUsage();
await embedder.embed(texts, { kind: 'passage' });
const cpuUsed = process.cpuUsage(cpu0);
const passageSeconds = (performance.now() - tp) / 1000;
const passagesPerSecond = PASSAGES / passageSeconds;
// CPU time of every thread in the process. On a shared machine wall time includes waiting for the cores.
// With the cores to itself, wall throughput is at least passages per CPU-second (all work on one core) and
// at most that × cores (perfect parallelism); spin-waiting is off, so CPU time is useful work.
const cpuSeconds = (cpuUsed.user + cpuUsed.system) / 1e6;
const perCpuSecond = PASSAGES / cpuSeconds;

const latencies: number[] = [];
for (let i = 0; i < QUERIES; i++) {
  const q = passage(10_000 + i, 6 + (i % 8));
  const s = performance.now();
  await embedder.embed([q], { kind: 'query' });
  latencies.push(performance.now() - s);
}
latencies.sort((a, b) => a - b);
const p50 = pct(latencies, 50);
const p95 = pct(latencies, 95);
const rss = peakRssMb();
await embedder.close();

const peakGflops = machine.cores * machine.ghz * FLOP_PER_CYCLE;
const achievedGflops = passagesPerSecond * GFLOP_PER_PASSAGE;
const ofPeak = (100 * achievedGflops) / peakGflops;

const rows: [string, string, string][] = [
  ['passages/s (256 tokens, batches of 16)', passagesPerSecond.toFixed(1), '≥ 15'],
  ['passages per CPU-second (uncontended lower bound)', perCpuSecond.toFixed(1), '≥ 15'],
  [`  × ${machine.cores} cores (uncontended upper bound)`, (perCpuSecond * machine.cores).toFixed(1), ''],
  ['query latency p50 (ms)', p50.toFixed(1), '≤ 15'],
  ['query latency p95 (ms)', p95.toFixed(1), ''],
  ['peak RSS (MB)', rss.toFixed(0), '≤ 800'],
  ['achieved GFLOP/s (6.0 GFLOP/passage)', achievedGflops.toFixed(1), ''],
  [`% of FP32 peak (${peakGflops.toFixed(0)} GFLOP/s)`, `${ofPeak.toFixed(0)}%`, ''],
  // The physical limit where the CPU has AVX-512: twice the lanes per FMA.
  ...(machine.avx512
    ? [[`% of AVX-512 FP32 peak (${(2 * peakGflops).toFixed(0)} GFLOP/s)`, `${(ofPeak / 2).toFixed(0)}%`, ''] as [string, string, string]]
    : []),
  ['model load (graph cached: sha256 + session)', `${(initMs / 1000).toFixed(1)} s`, ''],
];
const machineLine =
  `${machine.model}, ${machine.cores} cores @ ${machine.ghz.toFixed(2)} GHz ` +
  `(${machine.avx512 ? 'AVX-512' : machine.avx2 ? 'AVX2' : 'no AVX2'}), Node ${process.versions.node}, ` +
  `onnxruntime-node 1.22.0, spin-wait ${spinWait ? 'on' : 'off'}; 1-min load average at start ${load.toFixed(1)}`;

const width = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(`\n${machineLine}\n\n`);
process.stdout.write(`${'metric'.padEnd(width)}  ${'value'.padStart(9)}  target\n`);
for (const [name, value, target] of rows) process.stdout.write(`${name.padEnd(width)}  ${value.padStart(9)}  ${target}\n`);

if (process.argv.includes('--write')) {
  const file = join(import.meta.dirname, '..', 'docs', 'BENCHMARKS.md');
  const section = [
    '## Embedding',
    '',
    `\`npm run bench:embed\` (built-in all-MiniLM-L6-v2, fp32, onnxruntime in a worker thread, ${machine.cores} intra-op threads),`,
    `${new Date().toISOString().slice(0, 10)}, ${machineLine}.`,
    '',
    '| metric | value | target |',
    '|---|---:|---|',
    ...rows.map(([n, v, t]) => `| ${n} | ${v} | ${t} |`),
    '',
    `Peak = cores × GHz × ${FLOP_PER_CYCLE} FLOP/cycle (AVX2 FMA: 2 units × 8 fp32 lanes × 2); with AVX-512 the`,
    `hardware peak can be up to twice that. ${PASSAGES} passages, ${QUERIES} queries of 6–13 words, after a warm-up batch.`,
    'Wall-clock figures depend on what else runs: with a 1-minute load average above the core count the model',
    'gets only part of the CPU. Passages per CPU-second (all threads, spin-waiting off) bound what the same work',
    'reaches with the cores to itself: at least that figure (everything on one core), at most × cores.',
    '',
  ].join('\n');
  let doc = readFileSync(file, 'utf8');
  const start = doc.indexOf('## Embedding');
  if (start < 0) doc = `${doc.trimEnd()}\n\n${section}`;
  else {
    const next = doc.indexOf('\n## ', start + 1);
    doc = doc.slice(0, start) + section + (next < 0 ? '' : `\n${doc.slice(next + 1)}`);
  }
  writeFileSync(file, doc);
  process.stdout.write(`\nwrote the Embedding section of ${file}\n`);
}
