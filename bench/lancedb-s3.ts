/**
 * Several writers on one LanceDB table on S3 (a real Ceph RADOS Gateway, started here): N processes, each adding
 * batches of chunk rows through ChunkIndex as replicas do, first without and then with the commit funnel (one
 * committer per table at a time). Prints add latency p50/p95/max, commits per second, conflict retries, CPU
 * per process, and whether every row is there.
 *
 * Replicas coordinate through PostgreSQL advisory locks; here the parent process holds the locks and the
 * children ask it over IPC (a round trip of about the same cost), so the funnel is a real cross-process lock.
 *
 *   npm run bench:lancedb-s3                       # 4 writers × 25 adds, batches of 1 and of 64 rows
 *   npm run bench:lancedb-s3 -- --writers 8 --adds 50 --batches 1,16,64
 *
 * `--search` instead: where a search's time goes on the store. One table of `--rows` chunks (SciFact abstracts when
 * ../shared has them; 384-dim random unit vectors: this times the store, not a model), written in commits of 50 and
 * optimized as a replica would, on a local directory and on RGW through a relay that counts requests (directly,
 * through a replica's block cache of the table's immutable files, and from a replica's copy of the table); then the
 * three reads of a hybrid search (vector list of 200, keyword list of 1,000, hydrating 20 shown rows by row id),
 * 30 times each: median milliseconds and S3 requests per step.
 *
 *   npm run bench:lancedb-s3 -- --search --rows 2100
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { LocalEvents, LocalLocks, type Lease, type Locks } from '../src/store/coordination.js';
import { type ChunkRow, chunkId } from '../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { parseS3Location } from '../src/store/objects/location.js';
import { S3ObjectStore } from '../src/store/objects/s3.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRgw } from '../test/helpers/rgw.js';
import { logS3Requests, type S3RequestLog } from '../test/helpers/s3-request-log.js';
import { available as scifactAvailable, readCorpus } from './scifact.js';

const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: 384 };
const HOUR = 3600_000;

type ToParent =
  | { t: 'lock'; id: number; key: string }
  | { t: 'unlock'; id: number }
  | { t: 'try'; id: number; key: string }
  | { t: 'release'; id: number }
  | { t: 'ready' }
  | { t: 'done'; latencies: number[]; conflicts: number; cpuMs: number };
type ToChild = { t: 'locked'; id: number } | { t: 'lease'; id: number; ok: boolean } | { t: 'go' };

/** Locks held by the parent on the children's behalf. */
class IpcLocks implements Locks {
  private next = 0;
  private readonly waiting = new Map<number, (ok: boolean) => void>();

  constructor() {
    process.on('message', (m: ToChild) => {
      if (m.t === 'locked') this.waiting.get(m.id)?.(true);
      if (m.t === 'lease') this.waiting.get(m.id)?.(m.ok);
    });
  }

  private ask(msg: (id: number) => ToParent): Promise<{ id: number; ok: boolean }> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, (ok) => {
        this.waiting.delete(id);
        resolve({ id, ok });
      });
      process.send!(msg(id));
    });
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const { id } = await this.ask((id) => ({ t: 'lock', id, key }));
    try {
      return await fn();
    } finally {
      process.send!({ t: 'unlock', id } satisfies ToParent);
    }
  }

  async tryAcquire(key: string): Promise<Lease | null> {
    const { id, ok } = await this.ask((id) => ({ t: 'try', id, key }));
    if (!ok) return null;
    let held = true;
    return {
      release: async () => {
        if (held) process.send!({ t: 'release', id } satisfies ToParent);
        held = false;
      },
      held: () => held,
    };
  }
}

/** Serves one child's lock requests from the parent's LocalLocks; everything it holds is freed when it exits. */
function serveLocks(child: ChildProcess, locks: LocalLocks): void {
  const unlocks = new Map<number, () => void>();
  const leases = new Map<number, Lease>();
  child.on('message', (m: ToParent) => {
    if (m.t === 'lock') {
      void locks.withLock(m.key, () => new Promise<void>((release) => {
        unlocks.set(m.id, release);
        child.send({ t: 'locked', id: m.id } satisfies ToChild);
      }));
    } else if (m.t === 'unlock') {
      unlocks.get(m.id)?.();
      unlocks.delete(m.id);
    } else if (m.t === 'try') {
      void locks.tryAcquire(m.key).then((lease) => {
        if (lease) leases.set(m.id, lease);
        child.send({ t: 'lease', id: m.id, ok: lease !== null } satisfies ToChild);
      });
    } else if (m.t === 'release') {
      void leases.get(m.id)?.release();
      leases.delete(m.id);
    }
  });
  child.once('exit', () => {
    for (const release of unlocks.values()) release();
    for (const lease of leases.values()) void lease.release();
  });
}

let seed = 11;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const WORDS = 'cell protein gene tumor immune receptor signal pathway expression mouse patient clinical dose trial'.split(' ');

function rows(writer: number, add: number, size: number): ChunkRow[] {
  const doc = `w${writer}-a${add}-${randomBytes(3).toString('hex')}`;
  return Array.from({ length: size }, (_, i) => {
    const text = Array.from({ length: 80 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
    return {
      id: `${doc}:${i}`,
      user_id: `u${writer % 3}`,
      project_id: 'p',
      document_id: doc,
      chunk_index: i,
      text,
      search_text: text,
      heading: null,
      page_start: null,
      page_end: null,
      vector: Float32Array.from({ length: EMBEDDER.dimension }, () => rand() - 0.5),
    };
  });
}

/** `cache`: the replica's block cache of immutable files (`dir`), or its copy of the tables (`mirrorDir`). */
async function open(url: string, env: NodeJS.ProcessEnv, locks: Locks, funnelCommits: boolean, log?: { warn(obj: object, msg: string): void }, cache?: { dir: string; mirrorDir?: string }) {
  const loc = parseS3Location(url, env);
  const root = await S3ObjectStore.connect(loc);
  const fileCache = cache ? { fileCache: { ...cache, maxBytes: 1024 * 1024 * 1024, credentials: loc.credentials! } } : {};
  const store = await VectorStore.openS3(loc, root.at('lancedb'), { locks, events: new LocalEvents(), keepSupersededMs: HOUR, funnelCommits, ...(log ? { log } : {}), ...fileCache });
  const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id }, log ? { log } : {});
  return {
    index,
    async close() {
      await index.close();
      await store.close();
      root.close();
    },
  };
}

async function child(): Promise<void> {
  const writer = Number(process.env.BENCH_WRITER);
  const adds = Number(process.env.BENCH_ADDS);
  const batch = Number(process.env.BENCH_BATCH);
  let conflicts = 0;
  const log = { warn: (obj: object) => void ('attempt' in obj && conflicts++) };
  const { index, close } = await open(process.env.BENCH_URL!, process.env, new IpcLocks(), process.env.BENCH_FUNNEL === '1', log);
  const work = Array.from({ length: adds }, (_, a) => rows(writer, a, batch));
  await new Promise<void>((resolve) => {
    process.on('message', (m: ToChild) => m.t === 'go' && resolve());
    process.send!({ t: 'ready' } satisfies ToParent);
  });
  const cpu0 = process.cpuUsage();
  const latencies: number[] = [];
  for (const r of work) {
    const t = performance.now();
    await index.add(r, EMBEDDER);
    latencies.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  await close();
  process.send!({ t: 'done', latencies, conflicts, cpuMs: (cpu.user + cpu.system) / 1000 } satisfies ToParent);
  process.disconnect();
}

/** `n` chunk rows of one user: SciFact abstracts when present, else generated text; random unit vectors. */
function searchRows(n: number): ChunkRow[] {
  const corpus = scifactAvailable() ? readCorpus().slice(0, n) : [];
  return Array.from({ length: n }, (_, i) => {
    const generated = rows(0, i, 1)[0]!;
    const text = corpus[i] ? `${corpus[i]!.title} ${corpus[i]!.text}` : generated.text;
    const norm = Math.hypot(...generated.vector);
    return { ...generated, id: chunkId(`d${i}`, 0), user_id: 'u1', document_id: `d${i}`, chunk_index: 0, text, search_text: text, vector: generated.vector.map((x) => x / norm) };
  });
}

/** Median ms and S3 requests of each read a hybrid search makes, on an index holding `data`. */
async function timeSearchReads(index: ChunkIndex, data: ChunkRow[], requests?: S3RequestLog): Promise<string> {
  const queries = ['protein expression', 'cancer cells', 'gene expression in mice', 'vitamin D deficiency', 'insulin resistance', 'blood pressure'];
  const steps = { vector: { ms: [] as number[], requests: 0 }, keyword: { ms: [] as number[], requests: 0 }, hydrate: { ms: [] as number[], requests: 0 } };
  const timed = async <T>(step: keyof typeof steps, fn: () => Promise<T>): Promise<T> => {
    requests?.reset();
    const t = performance.now();
    const out = await fn();
    steps[step].ms.push(performance.now() - t);
    steps[step].requests += requests?.requests().length ?? 0;
    return out;
  };
  const ROUNDS = 30;
  for (let i = 0; i < ROUNDS; i++) {
    const vector = await timed('vector', () => index.vectorSearch({ projectIds: ['p'], vector: data[(i * 37) % data.length]!.vector, limit: 200 }));
    const keyword = await timed('keyword', () => index.keywordSearch({ projectIds: ['p'], query: queries[i % queries.length]!, limit: 1000 }));
    await timed('hydrate', () => index.getMany(['p'], [...vector.slice(0, 10), ...keyword.slice(0, 10)]));
  }
  return Object.entries(steps)
    .map(([name, st]) => `${name} ${pct(st.ms.sort((a, b) => a - b), 50).toFixed(1)} ms${requests ? ` (${(st.requests / ROUNDS).toFixed(1)} requests)` : ''}`)
    .join(', ');
}

async function searchBreakdown(n: number): Promise<void> {
  const data = searchRows(n);
  const fill = async (index: ChunkIndex) => {
    for (let i = 0; i < data.length; i += 50) await index.add(data.slice(i, i + 50), EMBEDDER);
    await index.optimize();
  };
  console.log(`where a search's reads go: ${n} chunks (${scifactAvailable() ? 'SciFact abstracts' : 'generated text'}), ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}; medians of 30`);
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-bench-search-'));
  try {
    const store = await VectorStore.open(join(dir, 'local'));
    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
    await fill(index);
    console.log(`local directory: ${await timeSearchReads(index, data)}`);
    await index.close();
    await store.close();
  } finally {
    rmSync(join(dir, 'local'), { recursive: true, force: true });
  }
  const rgw = await startRgw();
  const relay = await logS3Requests(rgw.endpoint);
  try {
    const env = { ...process.env, ...rgw.env(), AWS_ENDPOINT_URL: relay.endpoint };
    const { index, close } = await open(`s3://${rgw.bucket}/search`, env, new LocalLocks(), true);
    await fill(index);
    console.log(`Ceph RGW:        ${await timeSearchReads(index, data, relay)}`);
    await close();
    // The same table read again by a new process's worth of handles, through the replica's disk cache of
    // immutable files (its first reads fill it: the 30 rounds include them).
    const cached = await open(`s3://${rgw.bucket}/search`, env, new LocalLocks(), true, undefined, { dir: join(dir, 'file-cache') });
    console.log(`RGW, file cache: ${await timeSearchReads(cached.index, data, relay)}`);
    await cached.close();
    // Again, with the table copied to the replica's disk first (the daemon's default where it fits the cache).
    const copied = await open(`s3://${rgw.bucket}/search`, env, new LocalLocks(), true, undefined, { dir: join(dir, 'file-cache'), mirrorDir: join(dir, 'tables') });
    console.log(`RGW, copied:     ${await timeSearchReads(copied.index, data, relay)}`);
    await copied.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await relay.close();
    await rgw.stop();
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      writers: { type: 'string', default: '4' },
      adds: { type: 'string', default: '25' },
      batches: { type: 'string', default: '1,64' },
      search: { type: 'boolean', default: false },
      rows: { type: 'string', default: '2100' },
    },
  });
  if (values.search) return searchBreakdown(Number(values.rows));
  const writers = Number(values.writers);
  const adds = Number(values.adds);
  const batches = values.batches.split(',').map(Number);
  const rgw = await startRgw();
  const env = { ...process.env, ...rgw.env() };
  const locks = new LocalLocks();
  console.log(`LanceDB on Ceph RGW (memstore OSD, loopback): ${writers} writer processes × ${adds} adds each; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
  console.log('batch  funnel  rows ok        p50 ms   p95 ms   max ms   commits/s  conflict retries  CPU ms/add (per writer)');
  try {
    let run = 0;
    for (const batch of batches) {
      for (const funnel of [false, true]) {
        const url = `s3://${rgw.bucket}/bench-${run++}`;
        // The table exists before the writers start: the measurement is steady-state adds, not the first create.
        const first = await open(url, env, locks, funnel);
        await first.index.add(rows(99, 0, 1), EMBEDDER);
        await first.close();
        const children = Array.from({ length: writers }, (_, w) =>
          fork(new URL(import.meta.url).pathname, ['--child'], {
            execArgv: ['--import', 'tsx'],
            env: { ...env, BENCH_URL: url, BENCH_WRITER: String(w), BENCH_ADDS: String(adds), BENCH_BATCH: String(batch), BENCH_FUNNEL: funnel ? '1' : '0' },
          }),
        );
        for (const c of children) serveLocks(c, locks);
        const results = children.map(
          (c) =>
            new Promise<Extract<ToParent, { t: 'done' }>>((resolve, reject) => {
              c.on('message', (m: ToParent) => m.t === 'done' && resolve(m));
              c.once('exit', (code) => code !== 0 && reject(new Error(`writer exited with ${code}`)));
            }),
        );
        await Promise.all(children.map((c) => new Promise<void>((resolve) => c.on('message', (m: ToParent) => m.t === 'ready' && resolve()))));
        const t0 = performance.now();
        for (const c of children) c.send({ t: 'go' } satisfies ToChild);
        const done = await Promise.all(results);
        const wall = (performance.now() - t0) / 1000;
        const check = await open(url, env, locks, false);
        const count = await check.index.count();
        await check.close();
        const expected = 1 + writers * adds * batch;
        const lat = done.flatMap((d) => d.latencies).sort((a, b) => a - b);
        const conflicts = done.reduce((s, d) => s + d.conflicts, 0);
        const cpuPerAdd = done.map((d) => d.cpuMs / adds);
        console.log(
          [
            String(batch).padStart(5),
            (funnel ? 'yes' : 'no').padStart(6),
            `${count}/${expected}${count === expected ? ' ✓' : ' LOST'}`.padEnd(13),
            pct(lat, 50).toFixed(0).padStart(8),
            pct(lat, 95).toFixed(0).padStart(8),
            lat[lat.length - 1]!.toFixed(0).padStart(8),
            ((writers * adds) / wall).toFixed(1).padStart(10),
            String(conflicts).padStart(17),
            `  ${cpuPerAdd.map((c) => c.toFixed(0)).join(' ')}`,
          ].join(' '),
        );
      }
    }
  } finally {
    await rgw.stop();
  }
}

if (process.argv.includes('--child')) await child();
else await main();
