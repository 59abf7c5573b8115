/**
 * bench:search's filtered run (issue 60): `npm run bench:search -- --chunks '' --filtered 100000`.
 *
 * One library of `size` chunks (ten a document) of one user, written through the product's stores like
 * bench/search.ts's libraries and kept under bench/.cache/search/, whose documents' types make filters of known
 * selectivity (its copies of SciFact chunks are blends, see `blend`): 1 % of the documents are PDFs, 9 % Markdown, 40 % HTML and the rest plain text, spread over the table
 * (by a hash of the document's position), so `type=pdf` keeps 1 % of the rows, `type=pdf,markdown` 10 % and
 * `type=pdf,markdown,html` 50 %. Each chunk carries its document's fields as ingestion writes them (write.ts), so the
 * filter runs in LanceDB's prefilter on the scalar index of `content_type`.
 *
 * Measured over HTTP against one daemon (`--reranker none --backfill off`: nothing else runs), one client, limit 10,
 * hybrid, each query new to the daemon: unfiltered; unfiltered with facets (type, label, year); and each selectivity
 * filtered with the same facets — the conditions interleaved query by query, so the machine's drift falls on all
 * alike. p50/p95 of each and its ratio to the unfiltered p50 (target ≤ 1.2×), and the daemon's CPU time a search
 * (/proc: the load of a shared machine stretches wall time, not CPU time). In process: recall@10 of the vector
 * search the daemon runs (ChunkIndex.vectorSearch with the filter: HNSW with the prefilter, its head re-ranked, or an exact scan of
 * the filtered rows when they are few: `scansExactly`) against an exact scan of the filtered set.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RETRIEVE } from '../src/search/retrieve.js';
import { ChunkIndex, DEFAULT_ANN } from '../src/store/lancedb/chunks.js';
import type { ChunkWrite } from '../src/store/lancedb/chunk-schema.js';
import { chunkFilterSql } from '../src/store/lancedb/chunk-filter.js';
import { scansExactly } from '../src/store/lancedb/chunk-search.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { inList } from '../src/store/lancedb/owned-table.js';
import { DocumentStore } from '../src/store/sql/documents.js';
import { JobStore } from '../src/store/sql/jobs.js';
import { ProjectStore } from '../src/store/sql/projects.js';
import { openSqlite } from '../src/store/sql/sqlite.js';
import { UserStore } from '../src/store/sql/users.js';
import { addUser, api, removeDir, startDaemon, waitPreloaded } from '../test/helpers/daemon.js';
import { cpuMs, percentile } from './ingest-api.js';
import { linkTree } from './library-copy.js';
import { knobTable } from './filtered-knobs.js';
import { indexWrittenLibrary } from './library-index.js';
import { rng } from './scifact.js';

const CHUNKS_PER_DOCUMENT = 10;
const LIBRARY_VERSION = 2;
const log = (m: string) => process.stderr.write(`${m}\n`);

/** The types by share of documents, in the order the filters add them. */
const TYPES: [string, string, number][] = [
  ['pdf', 'application/pdf', 1],
  ['markdown', 'text/markdown', 9],
  ['html', 'text/html', 40],
  ['txt', 'text/plain', 50],
];

/** The filtered conditions: the types each keeps, and the share of rows that is. */
export const SELECTIVITIES: { percent: number; types: string[] }[] = [
  { percent: 1, types: ['pdf'] },
  { percent: 10, types: ['pdf', 'markdown'] },
  { percent: 50, types: ['pdf', 'markdown', 'html'] },
];
const FACETS = ['type', 'label', 'year'];

export interface FilteredSource {
  text: string;
  embedText: string;
  vector: Float32Array;
}

interface FilteredMeta {
  chunks: number;
  apiKey: string;
  userId: string;
  projectId: string;
  /** Rows of each type, as written. */
  rows: Record<string, number>;
  writeSeconds: number;
}

interface Timing {
  p50: number;
  p95: number;
  /** The daemon's CPU time a search (user + system, all threads), mean over the condition's searches. */
  cpuMs: number;
}

export interface FilteredResult {
  chunks: number;
  queries: number;
  unfiltered: Timing & { recall10: number; vectorCpuMs: number };
  facets: Timing;
  filtered: (Timing & { percent: number; rows: number; exact: boolean; recall10: number; vectorCpuMs: number; facetTotal: number })[];
}

/** The type of document `doc`: by a hash of its position, so each type's documents lie all over the table. */
function typeOf(doc: number): [string, string] {
  const r = ((doc * 2654435761) >>> 0) % 100;
  let acc = 0;
  for (const [name, mime, share] of TYPES) {
    acc += share;
    if (r < acc) return [name, mime];
  }
  return [TYPES.at(-1)![0], TYPES.at(-1)![1]];
}

/**
 * A copy of a source vector that is a point of its own: `w` of it and the rest of another source's, re-normalised.
 * Noisy copies (bench/search.ts's σ=0.01) would make a hundred near-ties of each source chunk at this many copies,
 * which the 8-bit vector index cannot order (recall@10 0.66 unfiltered here; docs/BENCHMARKS.md#search-latency at
 * a million); a blend keeps the neighbourhoods of real embeddings without repeats.
 */
function blend(a: Float32Array, b: Float32Array, w: number): Float32Array {
  const out = new Float32Array(a.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    out[i] = w * a[i]! + (1 - w) * b[i]!;
    n += out[i]! * out[i]!;
  }
  n = Math.sqrt(n);
  for (let i = 0; i < a.length; i++) out[i] = out[i]! / n;
  return out;
}

async function populate(dataDir: string, email: string, source: FilteredSource[], size: number, embedderId: string) {
  const sqlite = await openSqlite(join(dataDir, 'docsearch.db'));
  const now = () => Date.now();
  const user = (await new UserStore(sqlite.db, now).findByEmail(email))!;
  const project = await new ProjectStore(sqlite.db, now).ensureDefault(user.id);
  const jobs = new JobStore(sqlite.db, now);
  const documents = new DocumentStore(sqlite.db, jobs, now);
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId }, { ann: { minRows: Number.POSITIVE_INFINITY } });
  const rand = rng(60);
  const counts: Record<string, number> = {};
  let rows: ChunkWrite[] = [];
  const flush = async () => {
    await chunks.add(rows, { id: embedderId, dimension: 384 });
    rows = [];
  };
  const t0 = performance.now();
  let documentId = '';
  let mime = '';
  let uploadedAt = 0;
  for (let i = 0; i < size; i++) {
    const s = source[i % source.length]!;
    if (i % CHUNKS_PER_DOCUMENT === 0) {
      const doc = i / CHUNKS_PER_DOCUMENT;
      const [name, type] = typeOf(doc);
      mime = type;
      const { document } = await documents.createQueued({ userId: user.id, projectId: project.id, filename: `doc-${doc}.${name === 'markdown' ? 'md' : name}`, contentType: type, sizeBytes: s.text.length, sha256: `filtered-${doc}`, metadata: {} });
      documentId = document.id;
      uploadedAt = document.createdAt;
      const job = (await jobs.claim('bench', 60_000))!;
      await documents.markReady(job.documentId, job, { chunkCount: CHUNKS_PER_DOCUMENT, pages: null, warnings: [], embedderId });
    }
    counts[mime] = (counts[mime] ?? 0) + 1;
    const copy = Math.floor(i / source.length);
    rows.push({
      id: `${documentId}:${i % CHUNKS_PER_DOCUMENT}`,
      user_id: user.id,
      project_id: project.id,
      document_id: documentId,
      chunk_index: i % CHUNKS_PER_DOCUMENT,
      text: copy === 0 ? s.text : `${s.text} [copy ${copy}]`,
      search_text: copy === 0 ? s.embedText : `${s.embedText} [copy ${copy}]`,
      heading: null,
      page_start: null,
      page_end: null,
      vector: copy === 0 ? s.vector : blend(s.vector, source[Math.floor(rand() * source.length)]!.vector, 0.55 + 0.45 * rand()),
      // The document's fields, as ingestion writes them (write.ts).
      content_type: mime,
      uploaded_at: uploadedAt,
      path: null,
      source_id: null,
      labels: [],
      meta: [],
    });
    if (rows.length >= 5000) await flush();
    if ((i + 1) % 100_000 === 0) log(`  ${i + 1} rows written`);
  }
  await flush();
  const writeSeconds = (performance.now() - t0) / 1000;
  await indexWrittenLibrary(store, chunks, embedderId, log);
  await sqlite.close();
  return { userId: user.id, projectId: project.id, rows: counts, writeSeconds };
}

const mimes = (types: string[]) => types.map((t) => TYPES.find(([name]) => name === t)![1]);

/**
 * Recall@10 of the daemon's vector search (with the filter, as deep as the daemon asks: DEFAULT_RETRIEVE.vectorDepth)
 * against an exact scan of the filtered rows, and its CPU time in this process (LanceDB's threads included).
 */
async function recall(dataDir: string, embedderId: string, projectId: string, types: string[] | null, vectors: Float32Array[]): Promise<{ recall10: number; rows: number; exact: boolean; vectorCpuMs: number }> {
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId });
  // As the daemon at start (its preload): the indexes read and the row directory scanned, so that neither one-off
  // read lands in the CPU time of the searches measured (the directory of a million rows is seconds of it).
  await chunks.prewarm();
  const table = await store.connection.openTable(chunks.indexInfo()!.table);
  const filter = types ? { contentTypes: mimes(types) } : undefined;
  const where = [inList('project_id', [projectId]), ...(filter ? [chunkFilterSql(filter)!] : [])].join(' AND ');
  const rows = await table.countRows(where);
  const total = await table.countRows();
  const search = (v: Float32Array) => chunks.vectorSearch({ projectIds: [projectId], vector: v, limit: DEFAULT_RETRIEVE.vectorDepth, ...(filter ? { filter } : {}) });
  for (const v of vectors.slice(0, 5)) await search(v); // warm-up: the indexes, the counts
  let hits = 0;
  let cpu = 0;
  for (const v of vectors) {
    const exact = ((await table.vectorSearch(v).distanceType('cosine').where(where).bypassVectorIndex().select(['id']).limit(10).toArray()) as { id: string }[]).map((r) => r.id);
    const c0 = process.cpuUsage();
    const found = await search(v);
    const c = process.cpuUsage(c0);
    cpu += (c.user + c.system) / 1000;
    const got = new Set(found.sort((a, b) => a._distance - b._distance).slice(0, 10).map((h) => h.id));
    hits += exact.filter((id) => got.has(id)).length;
  }
  table.close();
  await chunks.close();
  store.close();
  return { recall10: hits / (10 * vectors.length), rows, exact: filter !== undefined && scansExactly(rows, total, DEFAULT_ANN), vectorCpuMs: cpu / vectors.length };
}

/** Builds (once) and measures the filtered library. */
export async function runFiltered(
  libraries: string,
  size: number,
  source: FilteredSource[],
  embedderId: string,
  queries: { text: string; vector: Float32Array }[],
  knobs = false,
): Promise<FilteredResult | string> {
  const dir = join(libraries, `filtered-${size}-v${LIBRARY_VERSION}`);
  if (!existsSync(join(dir, 'meta.json'))) {
    mkdirSync(libraries, { recursive: true });
    const staging = mkdtempSync(join(libraries, '.building-filtered-'));
    const dataDir = join(staging, 'data');
    const d = await startDaemon({ dataDir, args: ['--log-level', 'warn'], timeoutMs: 120_000 });
    const user = await addUser(d);
    await d.stop();
    log(`building the filtered ${size.toLocaleString('en')}-chunk library in ${dir}`);
    const meta: FilteredMeta = { chunks: size, apiKey: user.apiKey, ...(await populate(dataDir, user.email, source, size, embedderId)) };
    log(JSON.stringify(meta.rows));
    writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2));
    renameSync(staging, dir);
  }
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as FilteredMeta;
  const dataDir = mkdtempSync(join(libraries, '.run-filtered-'));
  try {
    linkTree(join(dir, 'data'), dataDir);
    const vectors = queries.slice(0, 100).map((q) => q.vector);
    if (knobs) {
      log('filtered library: the vector search knobs at shares of 1 to 50 %');
      const store = await VectorStore.open(join(dataDir, 'lancedb'));
      const chunks = await ChunkIndex.open(store, { embedderId });
      const table = await store.connection.openTable(chunks.indexInfo()!.table);
      try {
        return await knobTable(table, meta.projectId, vectors);
      } finally {
        table.close();
        await chunks.close();
        store.close();
      }
    }
    log('filtered library: recall@10 of each filter against an exact scan of its rows');
    const unfilteredRecall = await recall(dataDir, embedderId, meta.projectId, null, vectors);
    const recalls: Awaited<ReturnType<typeof recall>>[] = [];
    for (const s of SELECTIVITIES) recalls.push(await recall(dataDir, embedderId, meta.projectId, s.types, vectors));
    log(JSON.stringify({ unfilteredRecall, recalls }));
    const d = await startDaemon({ dataDir, args: ['--log-level', 'warn', '--reranker', 'none', '--backfill', 'off'], timeoutMs: 120_000 });
    try {
      await waitPreloaded(d);
      const conditions: { name: string; body: Record<string, unknown> }[] = [
        { name: 'unfiltered', body: {} },
        { name: 'facets', body: { facets: FACETS } },
        ...SELECTIVITIES.map((s) => ({ name: `${s.percent}%`, body: { filters: { type: s.types }, facets: FACETS } })),
      ];
      const lat = new Map<string, number[]>(conditions.map((c) => [c.name, []]));
      const cpu = new Map<string, number>(conditions.map((c) => [c.name, 0]));
      const totals = new Map<string, number>();
      const search = async (query: string, body: Record<string, unknown>) => {
        const res = await api(d, '/api/v1/search', { token: meta.apiKey, body: { query, limit: 10, ...body } });
        if (res.status !== 200) throw new Error(`search failed: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body as { facets?: Record<string, { value: string; count: number }[]> };
      };
      // Warm-up: the model, the tables, each filter's row count.
      for (const [i, q] of queries.slice(280, 300).entries()) await search(`${q.text} warm`, conditions[i % conditions.length]!.body);
      const texts = queries.map((q) => q.text).slice(0, 280);
      for (const [i, q] of texts.entries()) {
        // Each condition in turn, starting at a different one each query; every query new to the daemon.
        for (let k = 0; k < conditions.length; k++) {
          const c = conditions[(i + k) % conditions.length]!;
          const [t, c0] = [performance.now(), cpuMs(d.proc.pid!)];
          const body = await search(`${q} (${c.name})`, c.body);
          lat.get(c.name)!.push(performance.now() - t);
          cpu.set(c.name, cpu.get(c.name)! + cpuMs(d.proc.pid!) - c0);
          const types = body.facets?.type;
          if (types && i === 0) totals.set(c.name, types.reduce((a, x) => a + x.count, 0));
        }
      }
      const timing = (name: string): Timing => ({ p50: percentile(lat.get(name)!, 50), p95: percentile(lat.get(name)!, 95), cpuMs: cpu.get(name)! / lat.get(name)!.length });
      return {
        chunks: size,
        queries: texts.length,
        unfiltered: { ...timing('unfiltered'), recall10: unfilteredRecall.recall10, vectorCpuMs: unfilteredRecall.vectorCpuMs },
        facets: timing('facets'),
        filtered: SELECTIVITIES.map((s, i) => ({ percent: s.percent, ...timing(`${s.percent}%`), rows: recalls[i]!.rows, exact: recalls[i]!.exact, recall10: recalls[i]!.recall10, vectorCpuMs: recalls[i]!.vectorCpuMs, facetTotal: totals.get(`${s.percent}%`) ?? 0 })),
      };
    } finally {
      await d.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}
