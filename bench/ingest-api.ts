/**
 * The daemon-API ingestion cases of `npm run bench:ingest` (see bench/ingest.ts): many small files, one huge
 * text, searches while ingesting. Everything goes through the public API of a real daemon (built binary).
 *
 * The yardstick is the model itself: the same chunk texts the daemon stored are embedded again by a
 * BuiltinEmbedder in this process, and its CPU time per passage is set beside the daemon's CPU time per chunk.
 * CPU time (from /proc) is what counts on a shared machine: wall time there depends on the neighbours.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { BertPrecision } from '../src/models/builtin/bert-graph.js';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';
import { api, type Daemon, TEST_MODEL_CACHE, untilHealth } from '../test/helpers/daemon.js';
import { uploadFiles, type UploadFile } from '../test/ingest/pipeline/helpers.js';

const TICK_MS = 10; // USER_HZ is 100 on Linux
/** The searching client's pause between searches: one person searching as fast as results can be read. */
export const SEARCH_PAUSE_MS = 100;

/** CPU milliseconds (user + system, every thread) a process has used so far. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

export const vmHwmMb = (pid: number): number =>
  Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

export const vmRssMb = (pid: number): number =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

export const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export interface IngestRun {
  documents: number;
  chunks: number;
  failed: number;
  seconds: number;
  daemonCpuMs: number;
  /** RSS samples (MiB) taken while polling. */
  peakRssMb: number;
  searchMs: number[];
  /** The daemon's CPU during the run by thread role (see threadCpuMs); `other` is the rest of its total. */
  cpuSplit: { main: number; model: number; lancedb: number; other: number };
}

/**
 * Uploads `files` (in requests of `perRequest`, from `clients` clients at once), then polls until every document is ready or failed. With
 * `queries`, one client searches back to back (hybrid) for as long as the ingest runs. With `upkeepMs`, the
 * daemon's CPU is counted on past that, for as long as its background index upkeep may still be waiting to start
 * and then until it is idle: what the ingest costs in all, not only until its documents are ready.
 */
export async function ingestThroughApi(
  d: Daemon,
  token: string,
  files: UploadFile[],
  opts: { perRequest?: number; clients?: number; queries?: string[]; upkeepMs?: number; onTick?: (unfinished: string, total: number) => void } = {},
): Promise<IngestRun> {
  const pid = d.proc.pid!;
  const cpu0 = cpuMs(pid);
  const threads0 = threadCpuMs(pid);
  const t0 = performance.now();
  let peakRss = vmRssMb(pid);
  let done = false;
  const searchMs: number[] = [];
  const searching = (async () => {
    if (!opts.queries?.length) return;
    for (let i = 0; !done; i++) {
      const s = performance.now();
      const res = await api(d, '/api/v1/search', { token, body: { query: opts.queries[i % opts.queries.length], limit: 10 } });
      if (res.status === 200) searchMs.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, SEARCH_PAUSE_MS));
    }
  })();
  const ids: string[] = [];
  const perRequest = opts.perRequest ?? 20;
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.clients ?? 1 }, async () => {
      for (let i = next; i < files.length; i = next) {
        next += perRequest;
        const res = await uploadFiles(d, token, files.slice(i, i + perRequest));
        if (res.status !== 202 && res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
        ids.push(...res.body.documents.map((x: { id: string }) => x.id));
      }
    }),
  );
  // Cheap polling (the daemon's CPU is being measured): only the unfinished documents are listed.
  const open = async (status: string): Promise<number> =>
    ((await api(d, `/api/v1/documents?limit=100&status=${status}`, { token })).body.documents as unknown[]).length;
  for (;;) {
    peakRss = Math.max(peakRss, vmRssMb(pid));
    const queued = await open('queued');
    const left = queued + (await open('processing'));
    opts.onTick?.(`${left}${queued >= 100 ? '+' : ''}`, ids.length);
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const seconds = (performance.now() - t0) / 1000;
  done = true;
  await searching;
  if (opts.upkeepMs) {
    await new Promise((r) => setTimeout(r, opts.upkeepMs));
    for (let last = cpuMs(pid); ; ) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = cpuMs(pid);
      if (now - last < 20) break;
      last = now;
    }
  }
  const daemonCpuMs = cpuMs(pid) - cpu0;
  const threads1 = threadCpuMs(pid);
  const split = { main: threads1.main - threads0.main, model: threads1.model - threads0.model, lancedb: threads1.lancedb - threads0.lancedb };
  const { chunks, failed } = await documentTotals(d, token, ids);
  const cpuSplit = { ...split, other: daemonCpuMs - split.main - split.model - split.lancedb };
  return { documents: ids.length, chunks, failed, seconds, daemonCpuMs, peakRssMb: peakRss, searchMs, cpuSplit };
}

/**
 * The chunks of the documents `ids` (default: every document the user can see), and how many of them failed.
 * bench:search passes the ones it uploaded: the user owns a big library besides.
 */
export async function documentTotals(d: Daemon, token: string, ids?: readonly string[]): Promise<{ chunks: number; failed: number }> {
  let chunks = 0;
  let failed = 0;
  const count = (doc: { status: string; chunk_count: number }) => {
    chunks += doc.chunk_count;
    if (doc.status === 'failed') failed++;
  };
  if (ids) {
    for (const id of ids) count((await api(d, `/api/v1/documents/${id}`, { token })).body as { status: string; chunk_count: number });
    return { chunks, failed };
  }
  for (let cursor: string | null = null; ; ) {
    const page = await api(d, `/api/v1/documents?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token });
    for (const doc of page.body.documents as { status: string; chunk_count: number }[]) count(doc);
    cursor = page.body.next_cursor as string | null;
    if (!cursor) return { chunks, failed };
  }
}

/**
 * One big document: uploads it, then follows its progress every second until it is ready or `maxSeconds`
 * ran out (then the rate so far is what there is to report). Progress must never go down.
 */
export async function followOne(
  d: Daemon,
  token: string,
  file: UploadFile,
  maxSeconds: number,
): Promise<{ id: string; status: string; progress: number; chunks: number; seconds: number; daemonCpuMs: number; peakRssMb: number; monotonic: boolean; moves: number }> {
  const pid = d.proc.pid!;
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const res = await uploadFiles(d, token, [file]);
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  const id = res.body.documents[0].id as string;
  let peakRss = vmRssMb(pid);
  let last = 0;
  let monotonic = true;
  let moves = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    peakRss = Math.max(peakRss, vmRssMb(pid));
    const doc = (await api(d, `/api/v1/documents/${id}`, { token })).body as { status: string; progress: number; chunk_count: number };
    if (doc.progress < last) monotonic = false;
    if (doc.progress > last) moves++;
    last = doc.progress;
    const seconds = (performance.now() - t0) / 1000;
    process.stderr.write(`\r  ${file.name}: ${doc.status} ${(doc.progress * 100).toFixed(1)} % after ${seconds.toFixed(0)} s`);
    if (doc.status === 'ready' || doc.status === 'failed' || seconds > maxSeconds) {
      process.stderr.write('\n');
      return { id, status: doc.status, progress: doc.progress, chunks: doc.chunk_count, seconds, daemonCpuMs: cpuMs(pid) - cpu0, peakRssMb: peakRss, monotonic, moves };
    }
  }
}

/** Latencies (ms) of `n` back-to-back hybrid searches: the idle baseline for the ones taken while ingesting. */
export async function searchLatencies(d: Daemon, token: string, queries: string[], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const res = await api(d, '/api/v1/search', { token, body: { query: queries[i % queries.length], limit: 10 } });
    if (res.status === 200) out.push(performance.now() - s);
  }
  return out;
}

/** Stored chunks' embedded text (`search_text`), read from the daemon's LanceDB; at most `limit`, spread out. */
export async function storedSearchTexts(dataDir: string, limit = Infinity): Promise<string[]> {
  const db = await lancedb.connect(join(dataDir, 'lancedb'));
  const info = JSON.parse(readFileSync(join(dataDir, 'lancedb', 'chunks-index.json'), 'utf8')) as { table: string };
  const table = await db.openTable(info.table);
  const rows = (await table.query().select(['search_text']).toArray()) as { search_text: string }[];
  db.close();
  return sample(
    rows.map((r) => r.search_text),
    limit,
  );
}

/** One embedder for every yardstick run of the process (loaded once). */
let yardstick: BuiltinEmbedder | undefined;

/**
 * The model alone on `texts`: CPU ms and wall ms per passage, in calls of `perCall` texts (the embedder then
 * forms its own micro-batches, as in the daemon). Runs in this process, so its CPU time is this process's.
 */
export async function modelOnly(texts: string[], perCall = 64, precision?: BertPrecision): Promise<{ cpuMsPerPassage: number; wallMsPerPassage: number }> {
  yardstick ??= new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, ...(precision ? { precision } : {}) });
  const embedder = yardstick;
  await embedder.embed(texts.slice(0, 16), { kind: 'passage' }); // load and warm
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += perCall) await embedder.embed(texts.slice(i, i + perCall), { kind: 'passage' });
  const c = process.cpuUsage(c0);
  return { cpuMsPerPassage: (c.user + c.system) / 1000 / texts.length, wallMsPerPassage: (performance.now() - t0) / texts.length };
}

/** Resolves once the daemon's health reports its embedder loaded (the query session: what an idle daemon holds). */
export async function modelLoaded(d: Daemon, timeoutMs = 300_000): Promise<void> {
  await untilHealth(d, (c) => c.embedder?.loaded === true, 'the daemon reporting its model loaded', timeoutMs);
}

export const closeModel = (): Promise<void> => yardstick?.close() ?? Promise.resolve();

/** Deterministic sample of `n` items (every k-th), so model-only runs stay bounded. */
export const sample = <T>(xs: T[], n: number): T[] => (xs.length <= n ? xs : Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]!));

/**
 * CPU ms of a process's threads by role: the main thread, the passage model (onnxruntime threads at nice 10, see
 * src/models/onnx/session.ts) and LanceDB's runtime. Threads that already ended are missing here; the rest of the
 * process's CPU (parse workers, the query session, libuv and V8 helpers) is its total minus these.
 */
export function threadCpuMs(pid: number): { main: number; model: number; lancedb: number } {
  const out = { main: 0, model: 0, lancedb: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
      if (tid === String(pid)) out.main += ms;
      else if (Number(fields[16]) > 0) out.model += ms;
      else if (/^(tokio|lance)/.test(name)) out.lancedb += ms;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}
