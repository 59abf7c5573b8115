/**
 * Built-in embedder throughput, latency and memory, for each precision (npm run bench:embed).
 *
 * Each variant (fp32, int8) runs in a process of its own, so its peak RSS is its own:
 * - passages/s for 256-token passages, embedded in the embedder's own micro-batches; passages per CPU-second
 *   (every thread of the process: with the cores to itself the same work runs at least that fast, at most
 *   × cores), and the main thread's share of that CPU (Linux /proc; the passes run in onnxruntime's workers);
 * - single-query latency (p50/p95) with the model warm and nothing else queued;
 * - peak RSS of the process (VmHWM, the onnxruntime workers included);
 * - agreement with fp32: cosine of each passage's vector to its fp32 vector (min and mean);
 * - how close to the CPU's limit: the work per passage of all-MiniLM-L6-v2 at 256 tokens is 6.04 GFLOP,
 *   of which the dense layers (QKV, output, FFN) are 5.44 G operations and attention's two products 0.60 GFLOP.
 *   The int8 variant runs the dense part as int8 products (and the rest in fp32). Achieved operations per
 *   CPU-second are set against one core's peak at the clock measured here (a chain of dependent multiplies, 3
 *   cycles each); see peakPerCycle() for the peaks assumed.
 *
 * `--batch 1,8` runs each variant at each batch size (passages per forward pass; default the embedder's own) and adds
 * the CPU of mixed-length passages, where batching could save or cost padding, and of queries arriving 8 at once
 * (since cd748c5 a query always has a pass of its own, whatever the batch size: the two figures compare nothing).
 *
 * `--write` replaces the "## Embedding" section of docs/BENCHMARKS.md with the results; `--spin` turns on
 * onnxruntime's busy-waiting (off in the daemon); `--variants fp32,int8` picks variants, where `int8` is the storage this
 * CPU gets (int8-storage.ts) and `int8:signed` or `int8:unsigned` names one (see Int8Storage).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import type { BertPrecision, Int8Storage } from '../src/models/builtin/bert-graph.js';
import { int8StorageForThisCpu } from '../src/models/builtin/int8-storage.js';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';

const PASSAGES = Number(process.env.BENCH_PASSAGES ?? 128);
const QUERIES = 60;
/** Operations per 256-token passage: dense layers (multiply-adds × 2) and attention's QKᵀ and AV products. */
const DENSE_OPS = 6 * 2 * 256 * (384 * 1152 + 384 * 384 + 2 * 384 * 1536);
const ATTENTION_OPS = 6 * 2 * 2 * 12 * 256 * 256 * 32;
const CACHE = join(import.meta.dirname, '.cache', 'models');

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

interface Cpu {
  model: string;
  vendor: string;
  family: number;
  cores: number;
  avx2: boolean;
  avx512: boolean;
  vnni: boolean;
}

function cpu(): Cpu {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name: string): string => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(info)?.[1]?.trim() ?? '';
  const flags = field('flags').split(' ');
  return {
    model: field('model name'),
    vendor: field('vendor_id'),
    family: Number(field('cpu family')),
    cores: availableParallelism(),
    avx2: flags.includes('avx2'),
    avx512: flags.includes('avx512f'),
    vnni: flags.includes('avx512_vnni') || flags.includes('avx_vnni'),
  };
}

/**
 * One core's peak operations per cycle, fp32 FMA and int8 dot products. With AVX-512: two 512-bit FMA units
 * (64 FLOP) and two 512-bit VPDPBUSD (2 × 64 multiply-adds = 256 int8 operations). AMD family 25 (Zen 4)
 * executes AVX-512 as two 256-bit halves and is documented at half that; but the fp32 model measured here
 * reaches more than 32 FLOP per cycle, so the full-width figures are used (the conservative choice for "% of
 * peak"). AVX2: 32 FLOP; int8 without VNNI (VPMADDUBSW + VPMADDWD) about 64.
 */
function peakPerCycle(c: Cpu): { fp32: number; int8: number } {
  if (c.avx512) return { fp32: 64, int8: c.vnni ? 256 : 128 };
  return { fp32: c.avx2 ? 32 : 16, int8: c.vnni ? 128 : 64 };
}

/** The clock this process runs at: a chain of dependent 32-bit multiplies (3 cycles each) timed in CPU time. */
function measuredGhz(): number {
  const chain = (n: number): number => {
    let x = 3;
    for (let i = 0; i < n; i++) {
      x = Math.imul(x, x) | 1;
      x = Math.imul(x, x) | 1;
      x = Math.imul(x, x) | 1;
      x = Math.imul(x, x) | 1;
    }
    return x;
  };
  chain(1e6);
  let best = 0;
  for (let r = 0; r < 10; r++) {
    const c0 = process.cpuUsage();
    chain(5e6);
    const c = process.cpuUsage(c0);
    // 4 multiplies × (3 cycles + 1 for the `| 1`) per iteration.
    best = Math.max(best, (5e6 * 4 * 4) / ((c.user + c.system) / 1e6) / 1e9);
  }
  return best;
}

function peakRssMb(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kb ? Number(kb) / 1024 : process.memoryUsage().rss / 1048576;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const spinWait = process.argv.includes('--spin');
const texts = Array.from({ length: PASSAGES }, (_, i) => passage(i, 260));
/** Passages of 20–260 words, as a real document's chunks vary (the queue groups similar lengths into a batch). */
const mixed = Array.from({ length: PASSAGES }, (_, i) => passage(20_000 + i, 20 + ((i * 37) % 241)));

/** `fp32`, `int8` (this CPU's storage) or `int8:<storage>`. */
type Variant = string;

const parseVariant = (v: Variant): { precision: BertPrecision; int8Storage?: Int8Storage } => {
  const [precision, storage] = v.split(':') as [BertPrecision, Int8Storage | undefined];
  return precision === 'int8' ? { precision, int8Storage: storage ?? int8StorageForThisCpu() } : { precision };
};
/** The column heading: `int8` with the storage it ran on. */
const label = (v: Variant, batch?: number): string => {
  const { precision, int8Storage } = parseVariant(v);
  return `${int8Storage ? `${precision} (${int8Storage})` : precision}${batch ? ` ×${batch}` : ''}`;
};

interface VariantResult {
  variant: Variant;
  batch: number | undefined;
  precision: BertPrecision;
  graphBuilt: boolean;
  initS: number;
  passagesPerSecond: number;
  perCpuSecond: number;
  /** The main thread's share (%) of that CPU: tokenising and handing batches over; the passes run in workers. */
  mainThreadPercent: number;
  mixedPerCpuSecond: number;
  /** CPU ms per query when queries come 8 at once, each its own embed() call. */
  concurrentQueryCpuMs: number;
  p50: number;
  p95: number;
  peakRssMb: number;
  /** Every passage's vector, for the agreement with fp32. */
  vectors: number[][];
}

/** CPU ms the main thread has run, in nanoseconds' resolution (its schedstat; /proc's stat counts 10 ms ticks). */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** One variant, in this process (the child's side of `--child <precision>`). */
async function measure(variant: Variant, batch: number | undefined): Promise<VariantResult> {
  const { precision, int8Storage } = parseVariant(variant);
  const embedder = new BuiltinEmbedder({ modelCacheDir: CACHE, precision, ...(int8Storage ? { int8Storage } : {}), ...(batch ? { batchSize: batch } : {}), spinWait });
  const t0 = performance.now();
  await embedder.init();
  const initS = (performance.now() - t0) / 1000;
  const tokenCounts = texts.map((t) => Math.min(embedder.tokenizer.count(t), embedder.maxTokens));
  if (tokenCounts.some((n) => n !== 256)) throw new Error('bench passages must all be 256 tokens after truncation');

  // Warm-up: the passage session opens with the first batch; first runs allocate arenas and page weights in.
  await embedder.embed(texts.slice(0, 16), { kind: 'passage' });
  await embedder.embed(['warm-up query'], { kind: 'query' });

  const tp = performance.now();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  const vectors = await embedder.embed(texts, { kind: 'passage' });
  const mainMs = mainThreadCpuMs() - main0;
  const cpuUsed = process.cpuUsage(cpu0);
  const passageSeconds = (performance.now() - tp) / 1000;

  const latencies: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const s = performance.now();
    await embedder.embed([passage(10_000 + i, 6 + (i % 8))], { kind: 'query' });
    latencies.push(performance.now() - s);
  }
  latencies.sort((a, b) => a - b);

  const cpuSeconds = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1e6;
  const m0 = process.cpuUsage();
  await embedder.embed(mixed, { kind: 'passage' });
  const mixedPerCpuSecond = PASSAGES / cpuSeconds(process.cpuUsage(m0));
  const q0 = process.cpuUsage();
  for (let i = 0; i < QUERIES; i += 8) {
    await Promise.all(Array.from({ length: 8 }, (_, j) => embedder.embed([passage(30_000 + i + j, 4 + ((i + j) % 13))], { kind: 'query' })));
  }
  const concurrentQueryCpuMs = (cpuSeconds(process.cpuUsage(q0)) * 1000) / (Math.ceil(QUERIES / 8) * 8);
  const result: VariantResult = {
    variant,
    batch,
    precision,
    graphBuilt: embedder.graphBuilt ?? false,
    initS,
    passagesPerSecond: PASSAGES / passageSeconds,
    perCpuSecond: PASSAGES / cpuSeconds(cpuUsed),
    mainThreadPercent: mainMs / 10 / cpuSeconds(cpuUsed),
    mixedPerCpuSecond,
    concurrentQueryCpuMs,
    p50: pct(latencies, 50),
    p95: pct(latencies, 95),
    peakRssMb: peakRssMb(),
    vectors: vectors.map((v) => [...v]),
  };
  await embedder.close();
  return result;
}

function runChild(variant: Variant, batch: number | undefined): VariantResult {
  const out = execFileSync(process.execPath, [...process.execArgv, import.meta.filename, '--child', variant, ...(batch ? ['--batch', String(batch)] : []), ...(spinWait ? ['--spin'] : [])], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out) as VariantResult;
}

const child = arg('--child');
if (child) {
  const batch = arg('--batch');
  process.stdout.write(JSON.stringify(await measure(child, batch ? Number(batch) : undefined)));
} else {
  await main();
}

async function main(): Promise<void> {
  const machine = cpu();
  const load = loadavg()[0]!;
  const ghz = measuredGhz();
  const peak = peakPerCycle(machine);
  const variants = (arg('--variants') ?? 'fp32,int8').split(',');
  const batches = arg('--batch')?.split(',').map(Number) ?? [undefined];
  const results = variants.flatMap((v) =>
    batches.map((b) => {
      process.stderr.write(`measuring ${v}${b ? ` batch ${b}` : ''}…\n`);
      return runChild(v, b);
    }),
  );
  const fp32 = results.find((r) => r.precision === 'fp32');
  const cos = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i]!, 0);

  const rowNames: string[] = [];
  const cells = new Map<string, string[]>();
  const row = (name: string, values: string[]): void => {
    rowNames.push(name);
    cells.set(name, values);
  };
  row('passages/s (256 tokens, wall clock)', results.map((r) => r.passagesPerSecond.toFixed(1)));
  row('passages per CPU-second (uncontended lower bound; main thread\'s share)', results.map((r) => `${r.perCpuSecond.toFixed(1)} (${r.mainThreadPercent.toFixed(1)} %)`));
  row(`  × ${machine.cores} cores (uncontended upper bound)`, results.map((r) => (r.perCpuSecond * machine.cores).toFixed(1)));
  if (fp32) row('speed-up over fp32 (per CPU-second)', results.map((r) => `${(r.perCpuSecond / fp32.perCpuSecond).toFixed(2)}×`));
  row('mixed-length passages (20–260 words) per CPU-second', results.map((r) => r.mixedPerCpuSecond.toFixed(1)));
  row('CPU ms per query, 8 arriving at once', results.map((r) => r.concurrentQueryCpuMs.toFixed(1)));
  row('query latency p50 / p95 (ms)', results.map((r) => `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)}`));
  row('peak RSS of the process (MiB)', results.map((r) => r.peakRssMb.toFixed(0)));
  if (fp32) {
    row(
      `cosine to fp32 over ${PASSAGES} passages (min / mean)`,
      results.map((r) => {
        const c = r.vectors.map((v, i) => cos(v, fp32.vectors[i]!));
        return `${Math.min(...c).toFixed(4)} / ${(c.reduce((a, b) => a + b) / c.length).toFixed(4)}`;
      }),
    );
  }
  // Operations per CPU-second against one core's peak at the measured clock.
  row(
    'fp32 GFLOP per CPU-second (% of one core\'s fp32 peak)',
    results.map((r) => {
      const gflop = ((r.precision === 'fp32' ? DENSE_OPS + ATTENTION_OPS : ATTENTION_OPS) * r.perCpuSecond) / 1e9;
      return `${gflop.toFixed(0)} (${((100 * gflop) / (peak.fp32 * ghz)).toFixed(0)} %)`;
    }),
  );
  row(
    'int8 GOPS per CPU-second (% of one core\'s int8 peak)',
    results.map((r) => {
      if (r.precision !== 'int8') return '–';
      const gops = (DENSE_OPS * r.perCpuSecond) / 1e9;
      return `${gops.toFixed(0)} (${((100 * gops) / (peak.int8 * ghz)).toFixed(0)} %)`;
    }),
  );
  row('model load (s; graph built on this run?)', results.map((r) => `${r.initS.toFixed(1)}${r.graphBuilt ? ' (built)' : ''}`));

  const machineLine =
    `${machine.model} (${machine.vendor} family ${machine.family}), ${machine.cores} cores at ${ghz.toFixed(2)} GHz measured ` +
    `(${machine.avx512 ? 'AVX-512' : machine.avx2 ? 'AVX2' : 'no AVX2'}${machine.vnni ? ', VNNI' : ''}), Node ${process.versions.node}, ` +
    `onnxruntime-node 1.22.0, spin-wait ${spinWait ? 'on' : 'off'}; 1-min load average at start ${load.toFixed(1)}, at end ${loadavg()[0]!.toFixed(1)}`;
  const width = Math.max(...rowNames.map((r) => r.length));
  process.stdout.write(`\n${machineLine}\n\n${'metric'.padEnd(width)}  ${results.map((r) => label(r.variant, r.batch).padStart(16)).join('  ')}\n`);
  for (const name of rowNames) process.stdout.write(`${name.padEnd(width)}  ${cells.get(name)!.map((v) => v.padStart(16)).join('  ')}\n`);

  if (process.argv.includes('--write')) {
    const file = join(import.meta.dirname, '..', 'docs', 'BENCHMARKS.md');
    const section = [
      '## Embedding',
      '',
      `\`npm run bench:embed\` (built-in all-MiniLM-L6-v2, onnxruntime in worker threads, ${machine.cores} intra-op threads for passages),`,
      `${new Date().toISOString().slice(0, 10)}, ${machineLine}.`,
      '',
      `| metric | ${results.map((r) => label(r.variant, r.batch)).join(' | ')} |`,
      `|---|${results.map(() => '---:').join('|')}|`,
      ...rowNames.map((n) => `| ${n.trim()} | ${cells.get(n)!.join(' | ')} |`),
      '',
      `${PASSAGES} passages of 256 tokens in the embedder's passes (8 a pass by default; ×N: N a pass), ${QUERIES} queries of 6–13 words, after a warm-up batch;`,
      'each variant in a process of its own. Work per passage: 6.04 GFLOP, of which 5.44 G in the dense layers (int8 in the',
      'int8 variant) and 0.60 GFLOP in attention\'s products (fp32 in both). One core\'s peak at the measured clock:',
      `${peak.fp32} FLOP (fp32) and ${peak.int8} int8 operations a cycle (see peakPerCycle() in bench/embed.ts for why).`,
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
}
