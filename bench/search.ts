/**
 * npm run bench:search [-- --chunks 10000,100000,1000000] [--ingest 200] [--skip-probe] [--write]
 *
 * Search at scale, over HTTP against a real daemon (the built binary). The library is SciFact's really-embedded
 * chunks (from the bench/.cache vector cache that `bench:quality` fills) replicated with small perturbations —
 * Gaussian noise on each vector then re-normalised — written straight into a data dir through the product's stores.
 * A copy's text is its chunk's sentences with about half of them swapped for sentences of other abstracts, so no two
 * rows repeat a text (a cache keyed by text, or a keyword index, meets what a real library gives it). Each row
 * carries what an ingest writes: language and keyword forms (analysed per sentence, joined), answer units with
 * vectors, the document's filter fields — so the daemon's background backfill has nothing to do during the
 * measurement. The unit vectors are stand-ins (each source sentence's is its chunk's vector with noise, kept with the
 * sentence): the same bytes and the same work per search as pooled ones; this bench does not judge answers.
 *
 * Libraries are built once and kept under bench/.cache/search/: the rows with their full-text and scalar indexes
 * in one folder, and beside it the vector index the current code of src/store/lancedb/chunks.ts builds (made again
 * when that file changes, from the kept rows). Every run works on a copy made of hard links (LanceDB never
 * rewrites a file; SQLite's file is copied), so what a run writes never reaches the kept library.
 *
 * Per size: the index builds (time, CPU, peak memory), disk, recall@10/@100 of the vector index against an exact
 * scan (its answers kept beside the rows) and the in-process cost of each LanceDB query; then a daemon: RSS, single-client p50/p95, 8-client
 * throughput and CPU-ms per query, with the builtin reranker where the library has sentence windows (sizes up to
 * 100,000: a million chunks would carry ~9 million window vectors, and the default reranker is none); then
 * a daemon in the default configuration takes `--ingest` SciFact abstracts through the API with nothing else
 * running, then as many others while one client searches: the daemon's CPU per chunk beside the model's own, and
 * search latency while the indexes are kept current. `--write` rewrites the
 * "Search latency" section of docs/BENCHMARKS.md.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type * as lancedb from '@lancedb/lancedb';
import { parseArgs } from 'node:util';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';
import { windowTexts, sentenceWindows } from '../src/ingest/sentence-windows.js';
import { answerUnits } from '../src/ingest/answer-units.js';
import { documentFields } from '../src/ingest/write.js';
import { analyseText, ANALYSIS_VERSION } from '../src/language/analyse.js';
import { detectLanguage } from '../src/language/detect.js';
import { encodeUnits, type UnitSpan } from '../src/store/lancedb/unit-vectors.js';
import { keywordInput } from '../src/search/retrieve.js';
import { ChunkWindowIndex, type WindowRow } from '../src/store/lancedb/chunk-windows.js';
import type { ChunkWrite } from '../src/store/lancedb/chunk-schema.js';
import { ChunkIndex, chunkOptimizeGapMs } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { inList, lit } from '../src/store/lancedb/owned-table.js';
import { openSqlite } from '../src/store/sql/sqlite.js';
import { DocumentStore } from '../src/store/sql/documents.js';
import { JobStore } from '../src/store/sql/jobs.js';
import { ProjectStore } from '../src/store/sql/projects.js';
import { UserStore } from '../src/store/sql/users.js';
import { cosine } from '../test/helpers/cosine.js';
import { addUser, api, removeDir, startDaemon, type Daemon, waitPreloaded } from '../test/helpers/daemon.js';
import { cpuMs, ingestThroughApi, modelOnly, closeModel, percentile, vmHwmMb, vmRssMb } from './ingest-api.js';
import { available, chunkAbstract, readCorpus, readSplit, rng } from './scifact.js';
import { linkTree } from './library-copy.js';
import { runShared, type SharedResult } from './shared-library.js';
import { type FilteredResult, runFiltered, SELECTIVITIES } from './filtered-library.js';
import { VectorCache } from './vector-cache.js';

const REPO = resolve(import.meta.dirname, '..');
const CACHE = join(REPO, 'bench/.cache');
const LIBRARIES = join(CACHE, 'search');
/** Bump when the way libraries are generated changes: kept libraries of another version are not reused. */
const LIBRARY_VERSION = 3;
/** Sizes above this get no sentence windows (see the header). */
const MAX_WINDOWED = 100_000;
const MODEL_SAMPLE = 300;
/** SciFact chunks a library is made of (see sourceChunks). */
const SOURCE_CHUNKS = 3000;
const log = (m: string) => process.stderr.write(`${m}\n`);

const { values: argv } = parseArgs({
  options: {
    chunks: { type: 'string', default: '10000,100000,1000000' },
    ingest: { type: 'string', default: '200' },
    write: { type: 'boolean', default: false },
    /** No recall probe (its exact scans take ~1 CPU-s a query at a million rows): latency only. */
    'skip-probe': { type: 'boolean', default: false },
    shared: { type: 'string', default: '' },
    filtered: { type: 'string', default: '' },
    /** With --filtered: the vector search knobs' table instead (bench/filtered-knobs.ts). */
    knobs: { type: 'boolean', default: false },
  },
});
/** `--filtered 100000`: the filtered library's size (bench/filtered-library.ts); none by default. */
const FILTERED = argv.filtered ? Number(argv.filtered.replaceAll('_', '')) : 0;
/** SciFact chunks the filtered library is made of (embedded once into the vector cache), replicated to its size. */
const FILTERED_SOURCE = 1024;
const SIZES = argv.chunks.split(',').filter(Boolean).map((s) => Number(s.replaceAll('_', '')));
/** `--shared 1000000`: the shared library's size (bench/shared-library.ts); none by default. */
const SHARED = argv.shared ? Number(argv.shared.replaceAll('_', '')) : 0;
const INGEST = Number(argv.ingest);

function perturb(v: Float32Array, sigma: number, rand: () => number): Float32Array {
  const out = new Float32Array(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    // Box–Muller
    const g = Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
    out[i] = v[i]! + sigma * g;
    n += out[i]! * out[i]!;
  }
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) out[i] = out[i]! / n;
  return out;
}

interface SourceChunk {
  docId: string;
  title: string;
  text: string;
  embedText: string;
  vector: Float32Array;
  windows: { start: number; end: number; vector: Float32Array }[];
}

/** A source chunk's answer unit, as copies reuse it: its text, kind, stand-in vector, and keyword forms by language. */
interface SourceUnit {
  text: string;
  kind: UnitSpan['kind'];
  vector: Float32Array;
  forms: Map<string | null, string>;
}

/** What a row of a copy is made of, per source chunk: its language, its header's forms, its units. */
interface SourceParts {
  text: string;
  spans: UnitSpan[];
  language: string | null;
  header: string;
  headerForms: string;
  units: SourceUnit[];
}

function sourceParts(source: SourceChunk[], rand: () => number): SourceParts[] {
  return source.map((s) => {
    const language = detectLanguage(s.text);
    const header = s.embedText.endsWith(s.text) ? s.embedText.slice(0, s.embedText.length - s.text.length) : '';
    const spans = answerUnits(s.text);
    const units = spans.map((u) => ({ text: s.text.slice(u.start, u.end), kind: u.kind, vector: perturb(s.vector, 0.02, rand), forms: new Map<string | null, string>() }));
    return { text: s.text, spans, language, header, headerForms: analyseText(header, language), units };
  });
}

const formsOf = (u: SourceUnit, language: string | null): string => {
  let f = u.forms.get(language);
  if (f === undefined) u.forms.set(language, (f = analyseText(u.text, language)));
  return f;
};

/**
 * A row's text, search text, keyword forms and encoded units: copy 0 is the chunk itself; a copy swaps each of its
 * units, with probability ½, for a random unit of the whole source (another abstract's sentence, mostly).
 */
function rowText(parts: SourceParts[], at: number, copy: number, pool: SourceUnit[], rand: () => number): { text: string; search_text: string; keyword_text: string; language: string | null; units: Uint8Array; vectors: Float32Array[] } {
  const p = parts[at]!;
  const chosen = copy === 0 ? p.units : p.units.map((u) => (rand() < 0.5 ? pool[Math.floor(rand() * pool.length)]! : u));
  let spans: UnitSpan[] = [];
  let text = '';
  if (copy === 0) [text, spans] = [p.text, p.spans];
  else {
    for (const u of chosen) {
      if (text) text += ' ';
      spans.push({ start: text.length, end: text.length + u.text.length, kind: u.kind });
      text += u.text;
    }
  }
  const keyword = [p.headerForms, ...chosen.map((u) => formsOf(u, p.language))].filter(Boolean).join(' ');
  const vectors = chosen.map((u) => u.vector);
  return { text, search_text: p.header + text, keyword_text: keyword, language: p.language, units: encodeUnits(spans, vectors, p.header.trim()), vectors };
}

/** The mean of `vectors`, to unit length. */
function normalised(vectors: Float32Array[]): Float32Array {
  const out = new Float32Array(vectors[0]!.length);
  for (const v of vectors) for (let k = 0; k < out.length; k++) out[k]! += v[k]!;
  let n = 0;
  for (let k = 0; k < out.length; k++) n += out[k]! * out[k]!;
  n = Math.sqrt(n);
  for (let k = 0; k < out.length; k++) out[k] = out[k]! / n;
  return out;
}

/**
 * The first SOURCE_CHUNKS chunks of SciFact's corpus, embedded (once: the vector cache keeps them). Copies vary
 * their text and vector (rowText), so a library needs no more sources to avoid repeats.
 */
async function sourceChunks(embedder: BuiltinEmbedder, cache: VectorCache): Promise<SourceChunk[]> {
  const chunks = readCorpus()
    .flatMap((d) => chunkAbstract(d, embedder.tokenizer, embedder.maxTokens, 32).map((c) => ({ d, c })))
    .slice(0, SOURCE_CHUNKS);
  await cache.embed(embedder, chunks.map(({ c }) => c.embedText), 'passage', (done, total) => process.stderr.write(`\r  embedding source chunks: ${done} of ${total}   `));
  process.stderr.write('\n');
  const out: SourceChunk[] = [];
  for (const { d, c } of chunks) {
    {
      const vector = cache.get('passage', c.embedText);
      if (!vector) continue;
      const spans = sentenceWindows(c.text);
      const wv = windowTexts(c.text).map((t) => cache.get('passage', t));
      // A chunk whose windows are not embedded yet gets none (the reranker then keeps its fused place).
      const windows = wv.every((v) => v) ? spans.map((s, i) => ({ ...s, vector: wv[i]! })) : [];
      out.push({ docId: d.id, title: d.title, text: c.text, embedText: c.embedText, vector, windows });
    }
  }
  return out;
}

/** What a kept library holds, beside its data dir. */
interface LibraryMeta {
  email: string;
  apiKey: string;
  userId: string;
  chunks: number;
  windows: number;
  /** Writing the rows (SQLite documents, LanceDB appends). */
  writeSeconds: number;
  /** The first optimize: compaction, full-text and scalar indexes. */
  indexes: Build;
  /** The vector index (a folder of its own, see vectorIndexed). */
  vector?: Build;
}

interface Build {
  seconds: number;
  cpuSeconds: number;
  /** Peak RSS of the building process while it ran, MiB. */
  peakMiB: number;
}

const hash = (...parts: (string | Uint8Array)[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 12);
};

/** Times `fn`, with this process's CPU and its peak RSS over the call (VmHWM reset through clear_refs). */
async function timed(fn: () => Promise<void>): Promise<Build> {
  writeFileSync('/proc/self/clear_refs', '5');
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpuSeconds: (c.user + c.system) / 1e6, peakMiB: vmHwmMb(process.pid) };
}

function duBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? duBytes(p) : statSync(p).size;
  }
  return total;
}

/** Writes the rows of a library into `dataDir` (whose daemon made the SQLite schema and the user), no vector index. */
async function populate(dataDir: string, email: string, source: SourceChunk[], size: number, embedderId: string): Promise<Omit<LibraryMeta, 'email' | 'apiKey'>> {
  const sqlite = await openSqlite(join(dataDir, 'docsearch.db'));
  const now = () => Date.now();
  const user = await new UserStore(sqlite.db, now).findByEmail(email);
  if (!user) throw new Error(`no user ${email}`);
  const project = await new ProjectStore(sqlite.db, now).ensureDefault(user.id);
  const jobs = new JobStore(sqlite.db, now);
  const documents = new DocumentStore(sqlite.db, jobs, now);
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  // The vector index is built on its own (vectorIndexed), so a change to its parameters reuses these rows.
  const chunks = await ChunkIndex.open(store, { embedderId, keywordAnalysis: ANALYSIS_VERSION }, { ann: { minRows: Number.POSITIVE_INFINITY } });
  const windowed = size <= MAX_WINDOWED;
  const windows = await ChunkWindowIndex.open(store, 384);
  const rand = rng(42);
  const parts = sourceParts(source, rand);
  const pool = parts.flatMap((p) => p.units.filter((u) => u.kind !== 'heading'));
  let rows: ChunkWrite[] = [];
  let wrows: WindowRow[] = [];
  let windowCount = 0;
  const docIds = new Map<string, string>();
  let fields: ReturnType<typeof documentFields> | undefined;
  const flush = async () => {
    await chunks.add(rows, { id: embedderId, dimension: 384 });
    if (wrows.length) await windows.add(wrows);
    windowCount += wrows.length;
    rows = [];
    wrows = [];
  };
  const t0 = performance.now();
  for (let i = 0; i < size; i++) {
    const copy = Math.floor(i / source.length);
    const s = source[i % source.length]!;
    // Ten source chunks make one document, so 100k chunks are 10k documents to hydrate from.
    const key = `${copy}:${Math.floor((i % source.length) / 10)}`;
    let documentId = docIds.get(key);
    if (!documentId) {
      const { document } = await documents.createQueued({
        userId: user.id,
        projectId: project.id,
        filename: `scifact-${key.replace(':', '-')}.txt`,
        contentType: 'text/plain',
        sizeBytes: s.text.length,
        sha256: key,
        metadata: {},
      });
      documentId = document.id;
      docIds.set(key, documentId);
      // Ready at once, so the daemon's worker has nothing to do during the measurement (the queue holds one job at
      // a time: a claim scans the pending jobs, and a hundred thousand of them would make this quadratic).
      const job = (await jobs.claim('bench', 60_000))!;
      await documents.markReady(job.documentId, job, { chunkCount: 1, pages: null, warnings: [], embedderId, language: parts[i % source.length]!.language });
      fields = documentFields(document, [], {});
    }
    // Copies get a varied text (sentences of other abstracts swapped in) and a vector nudged off the original.
    const id = `${documentId}:${i}`;
    const { vectors: unitVectors, ...row } = rowText(parts, i % source.length, copy, pool, rand);
    // A copy's vector is its units' mean (theirs are their chunks' with noise): a blend of the abstracts it borrows from.
    const blended = copy === 0 || unitVectors.length === 0 ? s.vector : normalised(unitVectors);
    rows.push({
      ...fields!,
      ...row,
      id,
      user_id: user.id,
      project_id: project.id,
      document_id: documentId,
      chunk_index: i,
      heading: null,
      page_start: null,
      page_end: null,
      vector: copy === 0 ? s.vector : blended,
    });
    if (windowed) {
      // A copy's text is as long as its chunk's give or take a sentence: its windows keep their spans, within it.
      const length = rows[rows.length - 1]!.text.length;
      s.windows.forEach((w, wi) =>
        wrows.push({ chunk_id: id, user_id: user.id, project_id: project.id, document_id: documentId!, window_index: wi, start: Math.min(w.start, length), end: Math.min(w.end, length), vector: copy === 0 ? w.vector : perturb(w.vector, 0.01, rand) }),
      );
    }
    if (rows.length >= 5000) await flush();
    if ((i + 1) % 100_000 === 0) log(`  ${i + 1} rows written`);
  }
  await flush();
  const writeSeconds = (performance.now() - t0) / 1000;
  const indexes = await timed(() => chunks.optimize());
  await windows.optimize();
  await chunks.close();
  await windows.close();
  store.close();
  await sqlite.close();
  return { userId: user.id, chunks: size, windows: windowCount, writeSeconds, indexes };
}

/** The kept rows of a size (built when missing): the data dir and what it holds. */
async function rowsLibrary(source: SourceChunk[], size: number, embedderId: string): Promise<{ dir: string; meta: LibraryMeta }> {
  const lancedbVersion = (JSON.parse(readFileSync(join(REPO, 'node_modules/@lancedb/lancedb/package.json'), 'utf8')) as { version: string }).version;
  const key = hash(String(LIBRARY_VERSION), String(ANALYSIS_VERSION), String(size), lancedbVersion, ...source.map((s) => new Uint8Array(s.vector.buffer)), String(size <= MAX_WINDOWED ? source.filter((s) => s.windows.length).length : 0));
  const dir = join(LIBRARIES, `${size}-${key}`);
  if (existsSync(join(dir, 'meta.json'))) return { dir, meta: JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as LibraryMeta };
  mkdirSync(LIBRARIES, { recursive: true });
  const staging = mkdtempSync(join(LIBRARIES, '.building-'));
  const dataDir = join(staging, 'data');
  const d = await startDaemon({ dataDir, args: ['--log-level', 'warn'], timeoutMs: 120_000 });
  const user = await addUser(d);
  await d.stop();
  log(`building the ${size.toLocaleString('en')}-chunk library in ${dir}`);
  const meta: LibraryMeta = { email: user.email, apiKey: user.apiKey, ...(await populate(dataDir, user.email, source, size, embedderId)) };
  writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2));
  renameSync(staging, dir);
  return { dir, meta };
}

/**
 * The rows with the vector index the current chunks.ts builds (kept beside them, keyed by that file's text):
 * the timed optimize is what the daemon runs once a table reaches the index threshold or its rebuild point.
 */
async function vectorIndexed(rows: { dir: string; meta: LibraryMeta }, embedderId: string): Promise<{ dir: string; meta: LibraryMeta }> {
  const key = hash(readFileSync(join(REPO, 'src/store/lancedb/chunks.ts'), 'utf8'));
  const dir = `${rows.dir}-ann-${key}`;
  if (existsSync(join(dir, 'meta.json'))) return { dir, meta: JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as LibraryMeta };
  const staging = mkdtempSync(join(LIBRARIES, '.indexing-'));
  linkTree(join(rows.dir, 'data'), join(staging, 'data'));
  const store = await VectorStore.open(join(staging, 'data', 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId });
  log(`building the vector index of ${rows.meta.chunks.toLocaleString('en')} chunks`);
  const vector = await timed(() => chunks.optimize());
  await chunks.close();
  store.close();
  const meta = { ...rows.meta, vector };
  writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2));
  renameSync(staging, dir);
  return { dir, meta };
}

/** The projects a library's user owns (what their searches cover). */
async function ownProjects(dataDir: string, userId: string): Promise<string[]> {
  const sqlite = await openSqlite(join(dataDir, 'docsearch.db'));
  try {
    return (await new ProjectStore(sqlite.db, () => Date.now()).ownedBy(userId)).map((p) => p.id);
  } finally {
    await sqlite.close();
  }
}

interface Probe {
  recall10: number;
  recall100: number;
  /** Mean cosine similarity of the exact top 10 less that of the index's top 10: what the missed neighbours were worth. */
  simLost10: number;
  /** In-process CPU ms per call: vector top-100, keyword top-100, hydration of 20 rows by address. */
  vectorMs: number;
  keywordMs: number;
  hydrateMs: number;
}

/**
 * The exact top 100 of each query, by a full scan (~1.1 CPU-s a query at a million rows): kept beside the rows, since
 * it depends only on them and the queries, not on the vector index.
 */
async function exactTop100(rowsDir: string, table: lancedb.Table, projectIds: string[], vectors: Float32Array[]): Promise<string[][]> {
  const path = join(rowsDir, `exact-${hash(...vectors.map((v) => new Uint8Array(v.buffer)))}.json`);
  if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')) as string[][];
  const out: string[][] = [];
  for (const v of vectors) {
    const rows = (await table.vectorSearch(v).distanceType('cosine').where(inList('project_id', projectIds)).bypassVectorIndex().select(['id']).limit(100).toArray()) as { id: string }[];
    out.push(rows.map((r) => r.id));
  }
  writeFileSync(path, JSON.stringify(out));
  return out;
}

/** Recall of the index against an exact scan, and what each first-stage query costs LanceDB, in this process. */
async function probe(dataDir: string, rowsDir: string, projectIds: string[], embedderId: string, queries: { text: string; vector: Float32Array }[]): Promise<Probe> {
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId });
  const table = await store.connection.openTable(chunks.indexInfo()!.table);
  await chunks.prewarm();
  const exact = await exactTop100(rowsDir, table, projectIds, queries.map((q) => q.vector));
  const cpu = async (fn: () => Promise<unknown>): Promise<number> => {
    const c0 = process.cpuUsage();
    await fn();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
  };
  let hits10 = 0;
  let hits100 = 0;
  let simLost10 = 0;
  let vectorMs = 0;
  let keywordMs = 0;
  let hydrateMs = 0;
  for (const [i, q] of queries.entries()) {
    let ann: { id: string; _distance: number; _rowid?: bigint }[] = [];
    vectorMs += await cpu(async () => (ann = await chunks.vectorSearch({ projectIds, limit: 100, vector: q.vector })));
    // As a search asks it: the claim's forms in the languages it is read in (the library's are English).
    const { query, forms } = await keywordInput(q.text, async () => ['en']);
    keywordMs += await cpu(() => chunks.keywordSearch({ projectIds, limit: 100, query, forms }));
    hydrateMs += await cpu(() => chunks.getMany(projectIds, ann.slice(0, 20)));
    const top = (k: number) => new Set(ann.slice(0, k).map((x) => x.id));
    const [a10, a100] = [top(10), top(100)];
    hits10 += exact[i]!.slice(0, 10).filter((id) => a10.has(id)).length;
    hits100 += exact[i]!.filter((id) => a100.has(id)).length;
    const best = (await table.query().where(`id IN (${exact[i]!.slice(0, 10).map(lit).join(', ')})`).select(['vector']).toArray()) as { vector: Iterable<number> }[];
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    simLost10 += mean(best.map((r) => cosine(q.vector, Array.from(r.vector)))) - mean(ann.slice(0, 10).map((x) => 1 - x._distance));
  }
  await chunks.close();
  store.close();
  const n = queries.length;
  return { recall10: hits10 / (10 * n), recall100: hits100 / (100 * n), simLost10: simLost10 / n, vectorMs: vectorMs / n, keywordMs: keywordMs / n, hydrateMs: hydrateMs / n };
}


interface Measured {
  p50: number;
  p95: number;
  qps: number;
  cpuMs: number;
}

async function measure(d: Daemon, token: string, queries: string[], rerank: boolean, clients: number): Promise<Measured> {
  const lat: number[] = [];
  let next = 0;
  const cpu0 = cpuMs(d.proc.pid!);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < queries.length) {
        const q = queries[next++]!;
        const s = performance.now();
        const res = await api(d, '/api/v1/search', { token, body: { query: q, limit: 10, rerank } });
        if (res.status !== 200) throw new Error(`search failed: ${res.status} ${JSON.stringify(res.body)}`);
        lat.push(performance.now() - s);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return { p50: percentile(lat, 50), p95: percentile(lat, 95), qps: queries.length / wall, cpuMs: (cpuMs(d.proc.pid!) - cpu0) / queries.length };
}

/** The library's listings through the API at this size: p50 ms of 50 requests each, and the documents they count. */
interface Listings {
  documents: number;
  /** GET /api/v1/documents?limit=50 in each order, and filtered by status. */
  page: Record<'uploaded' | 'name' | 'size' | 'ready', number>;
  /** GET /api/v1/projects (each project's document, chunk and byte counts). */
  projects: number;
}

async function listings(d: Daemon, token: string): Promise<Listings> {
  const p50 = async (path: string) => {
    const lat: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = performance.now();
      const res = await api(d, path, { token });
      if (res.status !== 200) throw new Error(`${path} failed: ${res.status} ${JSON.stringify(res.body)}`);
      lat.push(performance.now() - s);
    }
    return percentile(lat, 50);
  };
  const list = '/api/v1/documents?limit=50';
  const projects = await api(d, '/api/v1/projects', { token });
  const documents = (projects.body as { projects: { document_count: number }[] }).projects.reduce((a, p) => a + p.document_count, 0);
  return {
    documents,
    page: { uploaded: await p50(list), name: await p50(`${list}&sort=name`), size: await p50(`${list}&sort=-size`), ready: await p50(`${list}&status=ready`) },
    projects: await p50('/api/v1/projects'),
  };
}

interface IngestPhase {
  chunks: number;
  seconds: number;
  /** The daemon's CPU per chunk (all threads) over the model's own CPU per passage on the same texts. */
  cpuRatio: number;
  lancedbMsPerChunk: number;
  peakRssMb: number;
}

interface IngestResult {
  /** Uploads with nothing else running: what ingestion costs at this library size. */
  alone: IngestPhase;
  /** Uploads while one client searches: the searches' latency meanwhile (the ratio includes their CPU). */
  searching: IngestPhase & { searchP50: number; searchP95: number; searches: number };
}

/**
 * `n` SciFact abstracts uploaded as new documents with nothing else running, then `n` others while one client
 * searches, into a daemon in the default configuration (reranker none: no sentence windows written); the model
 * alone on their chunks after, for the ratio.
 */
async function ingestPhases(d: Daemon, token: string, size: number, n: number, queries: string[], embedder: BuiltinEmbedder): Promise<IngestResult> {
  const corpus = readCorpus();
  const phase = async (docs: typeof corpus, searchWith?: string[]) => {
    const files = docs.map((x) => ({ name: `new-${x.id}.txt`, bytes: Buffer.from(`# ${x.title}\n\n${x.text}\n`) }));
    const r = await ingestThroughApi(d, token, files, { ...(searchWith ? { queries: searchWith } : {}), upkeepMs: chunkOptimizeGapMs(size) + 2000, onTick: (open, total) => process.stderr.write(`\r  ingesting: ${open} of ${total} not ready yet   `) });
    process.stderr.write('\n');
    if (r.failed) throw new Error(`${r.failed} uploaded documents failed`);
    const texts = docs.flatMap((x) => chunkAbstract(x, embedder.tokenizer, embedder.maxTokens, 32).map((c) => c.embedText));
    const step = Math.max(1, Math.floor(texts.length / MODEL_SAMPLE));
    const model = await modelOnly(texts.filter((_, i) => i % step === 0));
    const out: IngestPhase = {
      chunks: r.chunks,
      seconds: r.seconds,
      cpuRatio: r.daemonCpuMs / r.chunks / model.cpuMsPerPassage,
      lancedbMsPerChunk: r.cpuSplit.lancedb / r.chunks,
      peakRssMb: r.peakRssMb,
    };
    return { out, searchMs: r.searchMs };
  };
  const alone = (await phase(corpus.slice(0, n))).out;
  const searching = await phase(corpus.slice(n, 2 * n), queries);
  return {
    alone,
    searching: { ...searching.out, searchP50: percentile(searching.searchMs, 50), searchP95: percentile(searching.searchMs, 95), searches: searching.searchMs.length },
  };
}

interface SizeResult {
  meta: LibraryMeta;
  diskMiB: number;
  probe: Probe | null;
  /** From the daemon listening to its search indexes preloaded. */
  preloadSeconds: number;
  /** Rows the background backfill had pending when the measurement began, and wrote while it ran (both 0: nothing to do). */
  backfillPending: number;
  backfilled: number;
  rssIdleMb: number;
  rssPeakMb: number;
  fusion: { single: Measured; multi: Measured };
  rerank?: { single: Measured; multi: Measured };
  listings: Listings;
  ingest?: IngestResult;
}

async function runSize(size: number, source: SourceChunk[], embedder: BuiltinEmbedder, queryVectors: Float32Array[]): Promise<SizeResult> {
  const rows = await rowsLibrary(source, size, embedder.id);
  const lib = await vectorIndexed(rows, embedder.id);
  const { meta } = lib;
  const dataDir = mkdtempSync(join(LIBRARIES, '.run-'));
  try {
    linkTree(join(lib.dir, 'data'), dataDir);
    const diskMiB = duBytes(join(dataDir, 'lancedb')) / 2 ** 20;
    const test = readSplit('test').map((q) => q.text);
    const train = readSplit('train').map((q) => q.text);
    log(`${size.toLocaleString('en')} chunks: recall and in-process query costs`);
    const probed = argv['skip-probe'] ? null : await probe(dataDir, rows.dir, await ownProjects(dataDir, meta.userId), embedder.id, test.map((text, i) => ({ text, vector: queryVectors[i]! })));
    log(JSON.stringify(probed));
    const d = await startDaemon({ dataDir, args: ['--reranker', 'builtin', '--log-level', 'warn'], timeoutMs: 120_000 });
    try {
      const token = meta.apiKey;
      // Searches are measured once the startup preload is over: until then they share the CPU with it.
      const preloadSeconds = await waitPreloaded(d);
      log(`indexes preloaded ${preloadSeconds.toFixed(1)} s after the daemon listened`);
      // The rows carry what an ingest writes, so the background backfill finds nothing to do (said in the results).
      const backfill = async (): Promise<{ pending: number; done: number }> => {
        const c = ((await (await fetch(`${d.url}/api/v1/health`)).json()) as { components?: { backfill?: { derivers?: Record<string, { pending: number; done: number }> } } }).components;
        const all = Object.values(c?.backfill?.derivers ?? {});
        return { pending: all.reduce((a, x) => a + (x.pending ?? 0), 0), done: all.reduce((a, x) => a + (x.done ?? 0), 0) };
      };
      const backfillAtStart = await backfill();
      log(`backfill at start: ${JSON.stringify(backfillAtStart)}`);
      await measure(d, token, train.slice(700, 720), true, 1); // warm-up: model, tables, caches
      const rssIdleMb = vmRssMb(d.proc.pid!);
      // Distinct query sets per run, so the query-vector cache never hides the embedding cost.
      const fusion = { single: await measure(d, token, test.slice(0, 150), false, 1), multi: await measure(d, token, train.slice(0, 320), false, 8) };
      const rerank = meta.windows
        ? { single: await measure(d, token, test.slice(150, 300), true, 1), multi: await measure(d, token, train.slice(320, 640), true, 8) }
        : undefined;
      const rssPeakMb = vmHwmMb(d.proc.pid!);
      const listed = await listings(d, token);
      const backfilled = (await backfill()).done;
      await d.stop();
      let ingest: IngestResult | undefined;
      if (INGEST > 0) {
        const plain = await startDaemon({ dataDir, args: ['--log-level', 'warn'], timeoutMs: 120_000 });
        try {
          ingest = await ingestPhases(plain, token, size, INGEST, [...train.slice(720), ...train.slice(640, 700)], embedder);
        } finally {
          await plain.stop();
        }
      }
      const out: SizeResult = { meta, diskMiB, probe: probed, preloadSeconds, backfillPending: backfillAtStart.pending, backfilled, rssIdleMb, rssPeakMb, fusion, listings: listed, ...(rerank ? { rerank } : {}), ...(ingest ? { ingest } : {}) };
      log(JSON.stringify({ size, ...out, meta: undefined }));
      return out;
    } finally {
      await d.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}

function section(results: [number, SizeResult][], load: [number, number]): string {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const n = (x: number) => x.toLocaleString('en');
  const latency = results.flatMap(([size, r]) => [
    `| ${n(size)} | fusion (rerank=false) | ${f(r.fusion.single.p50)} | ${f(r.fusion.single.p95)} | ${f(r.fusion.multi.qps)} | ${f(r.fusion.multi.cpuMs)} | ${r.rssIdleMb} / ${r.rssPeakMb} |`,
    ...(r.rerank ? [`| ${n(size)} | + builtin rerank | ${f(r.rerank.single.p50)} | ${f(r.rerank.single.p95)} | ${f(r.rerank.multi.qps)} | ${f(r.rerank.multi.cpuMs)} | |`] : []),
  ]);
  const build = (b: Build | undefined) => (b ? `${f(b.seconds, 0)} s (${f(b.cpuSeconds, 0)} CPU-s, peak ${Math.round(b.peakMiB)} MiB)` : '—');
  const indexes = results.map(
    ([size, r]) =>
      `| ${n(size)} | ${build(r.meta.indexes)} | ${build(r.meta.vector)} | ${f(r.diskMiB / 1024, 2)} GiB | ` +
      (r.probe
        ? `${f(r.probe.recall10, 3)} / ${f(r.probe.recall100, 3)} | ${f(Math.round(r.probe.simLost10 * 1e4) / 1e4 || 0, 4)} | ${f(r.probe.vectorMs)} / ${f(r.probe.keywordMs)} / ${f(r.probe.hydrateMs)} |`
        : 'not probed (--skip-probe) | | |'),
  );
  const ingest = results.flatMap(([size, r]) => {
    if (!r.ingest) return [];
    const { alone, searching } = r.ingest;
    return [
      `| ${n(size)} | ${alone.chunks} chunks in ${f(alone.seconds, 0)} s | ${f(alone.cpuRatio, 2)}× | ${f(alone.lancedbMsPerChunk)} | ` +
        `${searching.chunks} chunks in ${f(searching.seconds, 0)} s | ${f(searching.searchP50, 0)} / ${f(searching.searchP95, 0)} ms (${searching.searches}) | ` +
        `${f(searching.cpuRatio, 2)}× | ${Math.max(alone.peakRssMb, searching.peakRssMb)} |`,
    ];
  });
  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}`;
  return [
    `\`npm run bench:search -- --chunks ${results.map(([s]) => s).join(',')}\`, ${new Date().toISOString().slice(0, 10)}, ${machine}; load average ` +
      `${f(load[0])} at the start, ${f(load[1])} at the end. Real daemon over HTTP (Node's fetch, one request at a time per client on a kept-alive connection), limit 10, hybrid mode; ` +
      `every query is new to the daemon (its query-vector cache never hits), so each includes one query embedding. Library: SciFact chunks ` +
      `(${SOURCE_CHUNKS.toLocaleString('en')}) replicated, each copy's text with about half its sentences swapped for other abstracts' and its vector their blend, ` +
      `rows written with what an ingest stores (keyword forms, answer units with vectors, filter fields): the background backfill had ` +
      `${results.map(([, r]) => `${n(r.backfillPending)} rows pending and wrote ${n(r.backfilled)}`).join('; ')}. "CPU ms/query" is the daemon's CPU time (all threads) per query ` +
      `under 8 clients: with ${availableParallelism()} cores, ${availableParallelism()} × 1000 / CPU ms is the most queries per second the daemon ` +
      `could serve. RSS: after start and warm-up / peak over the searches (the built-in model loaded, \`--reranker builtin\`). ` +
      `Measured once the daemon's health says its search indexes are preloaded (after ${results.map(([size, r]) => `${f(r.preloadSeconds)} s at ${n(size)} chunks`).join(', ')}).`,
    '',
    '| chunks | pipeline | p50 ms (1 client) | p95 ms (1 client) | q/s (8 clients) | CPU ms/query | RSS MiB |',
    '|---|---|---|---|---|---|---|',
    ...latency,
    '',
    `Targets: at 100,000 chunks p50 ≤ 30 ms, p95 ≤ 80 ms, ≥ 50 q/s with 8 clients; at 1,000,000 chunks p50/p95 ≤ 25/50 ms and RSS ≤ 2 GiB ` +
      `(default pipeline, fusion). Of a query's CPU, the query embedding (int8, one thread, ~0.5 G multiply-adds for ~24 tokens) is 3–4 ms; the rest is LanceDB executing three queries ` +
      `(vector, keyword, hydration) and HTTP — where the time goes: [search.md](search.md#indexes-and-what-a-search-costs). Sizes above ` +
      `${n(MAX_WINDOWED)} chunks are built without sentence windows, so the builtin reranker is measured up to there.`,
    '',
    'Indexes, built in the bench process on the kept library (the same code the daemon runs: its first optimize, then the one that builds the ' +
      'vector index); disk is the LanceDB folder; recall of the vector search (top 100, tenant filter) against an exact scan over the 300 ' +
      "SciFact test queries, and the similarity lost: the exact top 10's mean cosine similarity to the query less the index's top 10's; " +
      'then the LanceDB part of a search in-process, CPU ms per query.',
    '',
    '| chunks | compaction, full-text and scalar indexes | vector index | disk | recall@10 / @100 | similarity lost @10 | CPU ms: vector top-100 / keyword top-100 / hydrate 20 |',
    '|---|---|---|---|---|---|---|',
    ...indexes,
    '',
    'The library through the API at each size (what the web library page, `docsearch documents list` and `docsearch projects list` ask), p50 of 50 requests, one client: ' +
      'a page of 50 documents in upload order, by name, by size (largest first) and of the ready ones, and the projects with their counts.',
    '',
    '| chunks | documents | page: upload order / name / size / ready, ms | projects, ms |',
    '|---|---|---|---|',
    ...results.map(([size, r]) => {
      const { page } = r.listings;
      return `| ${n(size)} | ${n(r.listings.documents)} | ${f(page.uploaded)} / ${f(page.name)} / ${f(page.size)} / ${f(page.ready)} | ${f(r.listings.projects)} |`;
    }),
    ...(ingest.length
      ? [
          '',
          `Continued ingestion into the library through the API, the daemon in its default configuration (reranker none), keeping its indexes ` +
            `current meanwhile: ${INGEST} SciFact abstracts uploaded as new documents with nothing else running, then ${INGEST} others while one ` +
            `client searches (hybrid, a pause of 100 ms between searches). CPU ratio: the daemon's CPU per chunk (all threads; with the searches ` +
            `in the second), counted until its index upkeep after the last document has run, over the model's own CPU per passage on the same texts.`,
          '',
          '| chunks | ingested alone | CPU ratio | LanceDB CPU-ms/chunk | ingested while searching | search p50 / p95 meanwhile (searches) | CPU ratio | peak RSS MiB |',
          '|---|---|---|---|---|---|---|---|',
          ...ingest,
        ]
      : []),
    '',
  ].join('\n');
}

function sharedSection(r: SharedResult, load: [number, number]): string {
  const f = (x: number, digits = 1) => x.toFixed(digits);
  const n = (x: number) => x.toLocaleString('en');
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return [
    `\`npm run bench:search -- --chunks '' --shared ${r.chunks}\` (bench/shared-library.ts): one library of ${n(r.chunks)} chunks in ${n(r.projects)} projects of ` +
      `${n(r.users)} users. The reader reads ${r.readerProjects} of them (their own 5, 25 shared with them, 20 through two groups: ` +
      `${n(r.readerChunks)} chunks); the own-library user reads their own 5 (${n(r.ownChunks)} chunks). Searches over HTTP, one client, ` +
      `limit 10, hybrid, every query new, the two users alternating; recall of the vector search (top 10 / 100) against an exact scan of the ` +
      `same scope over 100 SciFact test queries. ${new Date().toISOString().slice(0, 10)}, ${cpu}, ${availableParallelism()} cores, load ${f(load[0])} → ${f(load[1])}.`,
    '',
    '| who | projects read | p50 ms | p95 ms | recall@10 / @100 |',
    '|---|---|---|---|---|',
    `| own library | 5 | ${f(r.own.p50)} | ${f(r.own.p95)} | ${f(r.own.recall10, 3)} / ${f(r.own.recall100, 3)} |`,
    `| reader (own, shared, groups) | ${r.readerProjects} | ${f(r.reader.p50)} | ${f(r.reader.p95)} | ${f(r.reader.recall10, 3)} / ${f(r.reader.recall100, 3)} |`,
    '',
    `The reader's p50 is **${f(r.reader.p50 / r.own.p50, 2)}×** the own-library search's (target ≤ 1.2×). Both filter inside LanceDB ` +
      '(`project_id IN (…)` on a bitmap index); nothing about access is cached between requests, so an unshare or a disabled account ' +
      'counts from the next request, on every replica (test/e2e/sharing-replicas.test.ts measures it).',
    '',
  ].join('\n');
}

function filteredSection(r: FilteredResult, load: [number, number]): string {
  const f = (x: number, digits = 1) => x.toFixed(digits);
  const n = (x: number) => x.toLocaleString('en');
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const ratio = (p50: number) => `**${f(p50 / r.unfiltered.p50, 2)}×**`;
  const cpuOf = (x: { cpuMs: number }) => `${f(x.cpuMs)} (${f(x.cpuMs / r.unfiltered.cpuMs, 2)}×)`;
  return [
    `\`npm run bench:search -- --chunks '' --filtered ${r.chunks}\` (bench/filtered-library.ts): ${n(r.chunks)} chunks, ten a document, whose ` +
      `documents are 1 % PDF, 9 % Markdown, 40 % HTML, 50 % text, spread over the table; \`type\` filters keep 1, 10 and 50 % of the rows. ` +
      `Over HTTP, one client, limit 10, hybrid, \`--reranker none\`, ${r.queries} SciFact test queries each new to the daemon, the five conditions ` +
      `interleaved query by query; facets \`type\`, \`label\`, \`year\`. Recall@10 of the vector search (in process, the daemon's code and depth, 200) against an ` +
      `exact scan of the filtered rows, and its CPU time, 100 queries. ${new Date().toISOString().slice(0, 10)}, ${cpu}, ${availableParallelism()} cores, load ${f(load[0])} → ${f(load[1])}.`,
    '',
    '| search | rows it keeps | vector search | p50 ms | p95 ms | p50 / unfiltered | CPU ms a search (÷ unfiltered) | its vector search, CPU ms | recall@10 |',
    '|---|---|---|---|---|---|---|---|---|',
    `| unfiltered | ${n(r.chunks)} | HNSW | ${f(r.unfiltered.p50)} | ${f(r.unfiltered.p95)} | 1.00× | ${cpuOf(r.unfiltered)} | ${f(r.unfiltered.vectorCpuMs)} | ${f(r.unfiltered.recall10, 3)} |`,
    `| unfiltered + facets | ${n(r.chunks)} | HNSW | ${f(r.facets.p50)} | ${f(r.facets.p95)} | ${ratio(r.facets.p50)} | ${cpuOf(r.facets)} | — | — |`,
    ...r.filtered.map(
      (x) =>
        `| ${x.percent} % (\`type=${SELECTIVITIES.find((s) => s.percent === x.percent)!.types.join(',')}\`) + facets | ${n(x.rows)} | ${x.exact ? 'exact scan' : 'HNSW, prefiltered, head re-ranked'} | ${f(x.p50)} | ${f(x.p95)} | ${ratio(x.p50)} | ${cpuOf(x)} | ${f(x.vectorCpuMs)} | ${f(x.recall10, 3)} |`,
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  if (!available()) {
    log('skipped: ../shared/eval/scifact is missing');
    return;
  }
  const load0 = loadavg()[0]!;
  const embedder = new BuiltinEmbedder({ modelCacheDir: join(CACHE, 'models') });
  const cache = VectorCache.open(join(CACHE, 'vectors-builtin.bin'), embedder.id, 384);
  if (FILTERED) {
    const chunks = readCorpus()
      .flatMap((x) => chunkAbstract(x, embedder.tokenizer, embedder.maxTokens, 32))
      .slice(0, FILTERED_SOURCE);
    const vectors = await cache.embed(embedder, chunks.map((c) => c.embedText), 'passage', (done, total) => process.stderr.write(`\r  embedding source chunks: ${done} of ${total}   `));
    process.stderr.write('\n');
    const source = chunks.map((c, i) => ({ text: c.text, embedText: c.embedText, vector: vectors[i]! }));
    const qv = await cache.embed(embedder, readSplit('test').map((q) => q.text), 'query');
    const r = await runFiltered(LIBRARIES, FILTERED, source, embedder.id, readSplit('test').map((q, i) => ({ text: q.text, vector: qv[i]! })), argv.knobs);
    const text = typeof r === 'string' ? `${r}\n\nload ${loadavg()[0]!.toFixed(1)}` : filteredSection(r, [load0, loadavg()[0]!]);
    process.stdout.write(`\n${text}\n`);
    const bm = join(REPO, 'docs/BENCHMARKS.md');
    if (argv.write && typeof r !== 'string') writeFileSync(bm, readFileSync(bm, 'utf8').replace(/## Filtered search\n[\s\S]*?(?=\n## |$)/, `## Filtered search\n\n${text}\n`));
    if (SIZES.length === 0 && !SHARED) {
      await embedder.close();
      await closeModel();
      return;
    }
  }
  const source = await sourceChunks(embedder, cache);
  if (source.length < 1000) throw new Error(`only ${source.length} embedded chunks cached: run npm run bench:quality first`);
  log(`${source.length} embedded source chunks, ${source.filter((s) => s.windows.length).length} with windows`);
  const queryVectors = await cache.embed(embedder, readSplit('test').map((q) => q.text), 'query');
  const results: [number, SizeResult][] = [];
  for (const size of SIZES) results.push([size, await runSize(size, source, embedder, queryVectors)]);
  const shared = SHARED ? await runShared(LIBRARIES, SHARED, source, embedder.id, readSplit('test').map((q, i) => ({ text: q.text, vector: queryVectors[i]! })), (v, rand) => perturb(v, 0.01, rand)) : null;
  await embedder.close();
  await closeModel();
  const bm = join(REPO, 'docs/BENCHMARKS.md');
  if (results.length > 0) {
    const text = section(results, [load0, loadavg()[0]!]);
    process.stdout.write(`\n${text}\n`);
    if (argv.write) writeFileSync(bm, readFileSync(bm, 'utf8').replace(/## Search latency\n[\s\S]*?(?=\n## |$)/, `## Search latency\n\n${text}`));
  }
  if (shared) {
    const text = sharedSection(shared, [load0, loadavg()[0]!]);
    process.stdout.write(`\n${text}\n`);
    if (argv.write) writeFileSync(bm, readFileSync(bm, 'utf8').replace(/## Shared library search\n[\s\S]*?(?=\n## |$)/, `## Shared library search\n\n${text}`));
  }
}

await main();
