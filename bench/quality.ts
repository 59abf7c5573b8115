/**
 * npm run bench:quality [-- --tune] [-- --no-builtin] [-- --embedder builtin:fp32|builtin:int8]
 *
 * SciFact through the product's own code: the chunker (src/ingest/chunk.ts), the built-in embedder, the
 * LanceDB chunk store and window store in a cache dir, and the search retriever (src/search/retrieve.ts)
 * with the daemon's defaults (list depths, fusion, relevance floor) and its grouping by document — not over
 * HTTP, but the same ranking the API returns. Prints, on the TEST split, nDCG@10 and recall@100 for keyword,
 * vector, hybrid (the default), hybrid without the relevance floor and hybrid + the builtin reranker, beside the
 * published baselines; and the floor's check: how many of 50 generated nonsense queries (bench/nonsense.ts,
 * seed 1) come back weak or empty, and how many test queries do. Rewrites the "Search quality" section of
 * docs/BENCHMARKS.md.
 *
 * `--tune` works on the TRAIN split only (never the test split): a grid over the fusion (k and the keyword
 * list's weight), the floor's calibration (train queries against 200 other nonsense queries, seed 2), and the
 * builtin reranker's λ. `--no-builtin` skips the builtin reranker (and embedding its sentence windows).
 * `--embedder` measures another precision of the built-in model than the default; its figures are printed, and
 * the section of docs/BENCHMARKS.md (the default's) is left as it is.
 *
 * Vectors are cached by content under bench/.cache/ (vector-cache.ts), and the built LanceDB index under
 * bench/.cache/scifact-<key>/ keyed by corpus + model + chunker and analysis code, so reruns take seconds.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { type EmbeddedChunk, embedWithUnits } from '../src/ingest/unit-vectors.js';
import { toRows } from '../src/ingest/write.js';
import { chunkId } from '../src/store/lancedb/chunk-schema.js';
import { mostCommonLanguage } from '../src/language/detect.js';
import { BuiltinEmbedder, DEFAULT_BUILTIN_PRECISION } from '../src/models/builtin/minilm-embedder.js';
import { GRAPH_REVISION } from '../src/models/builtin/graph-cache.js';
import { createEmbedder } from '../src/models/registry.js';
import { relevanceFloor } from '../src/search/floor.js';
import { groupByDocument } from '../src/search/group.js';
import { QueryVectorCache } from '../src/search/query-cache.js';
import type { SearchMode } from '../src/search/query.js';
import { BuiltinReranker, DEFAULT_BUILTIN_PARAMS, type BuiltinRerankParams } from '../src/search/rerank/builtin.js';
import type { CandidateReranker } from '../src/search/rerank/stage.js';
import { windowRows } from '../src/search/rerank/window-writes.js';
import { bestMatchFirst, DEFAULT_RETRIEVE, type Fusion, nearestFirst, rankFirstStage, type RetrieveOptions, Retriever } from '../src/search/retrieve.js';
import { sentenceWindows } from '../src/ingest/sentence-windows.js';
import { ChunkWindowIndex, type WindowRow } from '../src/store/lancedb/chunk-windows.js';
import type { ChunkRow } from '../src/store/lancedb/chunk-schema.js';
import type { KeywordHit, VectorHit } from '../src/store/lancedb/chunk-search.js';
import { ChunkIndex, DEFAULT_ANN } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { nonsenseQueries } from './nonsense.js';
import { available, chunkAbstract, docRanking, ndcgAt, pairedPermutationP, readCorpus, readSplit, recallAt, SCIFACT } from './scifact.js';
import { VectorCache } from './vector-cache.js';

const REPO = resolve(import.meta.dirname, '..');
const CACHE = join(REPO, 'bench/.cache');
const OVERLAP_TOKENS = 32; // what the daemon passes to the pipeline (src/server/daemon.ts)
const USER = 'bench-user';
const PROJECT = 'scifact';
const BASELINES = { 'BM25 [BEIR]': 0.665, 'BM25 + MiniLM cross-encoder [BEIR]': 0.688, 'all-MiniLM-L6-v2 dense [MTEB]': 0.645 };
/** The floor's check set (reported) and calibration set (--tune): different seeds, so they never overlap. */
const NONSENSE_CHECK = { count: 50, seed: 1 };
const NONSENSE_CALIBRATION = { count: 200, seed: 2 };
/** The fusion before score fusion was chosen, kept in the table for comparison. */
const PREVIOUS_FUSION: Fusion = { method: 'rrf', k: 60, vectorWeight: 1, keywordWeight: 1 };

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sha = (parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;

function dirSize(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirSize(p) : statSync(p).size;
  }
  return total;
}

export type Query = { id: string; text: string; relevant: Map<string, number> };

export interface Built {
  chunks: ChunkIndex;
  store: VectorStore;
  dir: string;
  chunkCount: number;
}

/** The SciFact chunks table (vectors and answer units), built once per corpus + model + chunker code. */
export async function buildChunks(embedder: BuiltinEmbedder, only?: ReadonlySet<string>): Promise<Built> {
  const corpusStat = statSync(join(SCIFACT, 'corpus.jsonl'));
  const read = (files: string[]) => files.map((f) => readFileSync(join(REPO, f), 'utf8'));
  // What the vectors and answer units depend on: the chunks' texts and the model (its id and graph revision).
  const embedCode = read(['src/ingest/chunk.ts', 'src/ingest/sentences.ts', 'src/ingest/answer-units.ts', 'src/ingest/sentence-windows.ts', 'src/ingest/unit-vectors.ts', 'src/store/lancedb/unit-vectors.ts', 'src/models/builtin/minilm-embedder.ts']);
  const embedKey = sha([String(corpusStat.size), String(corpusStat.mtimeMs), embedder.id, String(GRAPH_REVISION), String(OVERLAP_TOKENS), ...embedCode, ...(only ? [[...only].sort().join(',')] : [])]);
  // The keyword analysis (src/language, and DOCSEARCH_ANALYSIS=english) writes keyword_text, so it keys the index too.
  const code = read(['src/ingest/write.ts', 'src/store/lancedb/chunks.ts', ...readdirSync(join(REPO, 'src/language')).map((f) => `src/language/${f}`)]);
  const key = sha([embedKey, process.env.DOCSEARCH_ANALYSIS ?? '', ...code]);
  const dir = join(CACHE, `scifact-${key}`);
  const done = join(dir, 'COMPLETE');
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true });
    const docs = readCorpus().filter((d) => !only || only.has(d.id));
    const t0 = performance.now();
    const perDoc = docs.map((d) => chunkAbstract(d, embedder.tokenizer, embedder.maxTokens, OVERLAP_TOKENS));
    const all = perDoc.flat();
    log(`chunked ${docs.length} abstracts into ${all.length} chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // Vectors and answer units from one pass per chunk, as ingestion makes them — or, where another build has the
    // same chunks and model (only the keyword analysis differs), its vectors and units: a change of analysis costs
    // seconds, not an embedding of the corpus.
    const reused = await embeddedElsewhere(embedKey);
    const embedded: EmbeddedChunk[] = [];
    const taken = reused ? docs.flatMap((d, di) => perDoc[di]!.map((c) => reused.get(chunkId(d.id, c.index)))) : [];
    if (reused && taken.every((e, i) => e?.text === all[i]!.text)) {
      embedded.push(...taken.map((e) => ({ vector: e!.vector, units: e!.units })));
      log(`  vectors and units of ${all.length} chunks taken from ${reused.from} (same chunks and model)`);
    }
    for (let i = embedded.length; i < all.length; i += 256) {
      embedded.push(...(await embedWithUnits(embedder, all.slice(i, i + 256), { kind: 'passage' })));
      log(`  embedded chunks ${embedded.length}/${all.length}`);
    }
    const store = await VectorStore.open(dir);
    const chunks = await ChunkIndex.open(store, { embedderId: embedder.id });
    const rows: ChunkRow[] = [];
    let k = 0;
    for (const [di, d] of docs.entries()) {
      const cs = perDoc[di]!;
      rows.push(...(await toRows({ documentId: d.id, userId: USER, projectId: PROJECT }, cs, embedded.slice(k, k + cs.length))));
      k += cs.length;
    }
    for (let i = 0; i < rows.length; i += 2000) await chunks.add(rows.slice(i, i + 2000), embedder);
    await chunks.optimize();
    writeFileSync(done, JSON.stringify({ chunks: rows.length, embedKey }));
    store.close();
  }
  const counts = JSON.parse(readFileSync(done, 'utf8')) as { chunks: number };
  const store = await VectorStore.open(dir);
  return { store, dir, chunks: await ChunkIndex.open(store, { embedderId: embedder.id }), chunkCount: counts.chunks };
}

/** The vectors and units of a complete build of the same chunks and model (its COMPLETE names `embedKey`), by chunk id. */
async function embeddedElsewhere(embedKey: string): Promise<(Map<string, EmbeddedChunk & { text: string }> & { from: string }) | null> {
  for (const name of readdirSync(CACHE).filter((n) => n.startsWith('scifact-'))) {
    const done = join(CACHE, name, 'COMPLETE');
    if (!existsSync(done) || (JSON.parse(readFileSync(done, 'utf8')) as { embedKey?: string }).embedKey !== embedKey) continue;
    const store = await VectorStore.open(join(CACHE, name));
    try {
      const table = await store.connection.openTable((await store.connection.tableNames()).find((t) => t.startsWith('chunks'))!);
      const rows = (await table.query().select(['id', 'text', 'vector', 'units']).toArray()) as { id: string; text: string; vector: Iterable<number>; units: Uint8Array }[];
      return Object.assign(new Map(rows.map((r) => [r.id, { text: r.text, vector: Float32Array.from(r.vector), units: Uint8Array.from(r.units) }])), { from: name });
    } finally {
      store.close();
    }
  }
  return null;
}

/**
 * The languages the library's abstracts are in, most first, each abstract's being its chunks' most common (as
 * ingestion sets a document's, and as DocumentStore.languagesIn counts them for the daemon's searches).
 */
async function libraryLanguages(built: Built): Promise<{ language: string; documents: number }[]> {
  const documents = new Map<string, number>();
  for (const counts of (await built.chunks.languageTally()).values()) {
    const language = mostCommonLanguage(counts);
    if (language) documents.set(language, (documents.get(language) ?? 0) + 1);
  }
  return [...documents].map(([language, n]) => ({ language, documents: n })).sort((a, b) => b.documents - a.documents || (a.language < b.language ? -1 : 1));
}

/** The builtin reranker's sentence windows beside the chunks (only when it is evaluated), rebuilt when their code changes. */
async function buildWindows(built: Built, embedder: BuiltinEmbedder, vectors: VectorCache): Promise<{ windows: ChunkWindowIndex; windowCount: number }> {
  const key = sha(['src/ingest/sentence-windows.ts', 'src/search/rerank/window-writes.ts', 'src/store/lancedb/chunk-windows.ts'].map((f) => readFileSync(join(REPO, f), 'utf8')));
  const done = join(built.dir, `WINDOWS-${key}`);
  if (!existsSync(done)) {
    const names = await built.store.connection.tableNames();
    if (names.includes('chunk_windows')) await built.store.connection.dropTable('chunk_windows');
    const windows = await ChunkWindowIndex.open(built.store, embedder.dimension);
    const docs = readCorpus();
    const rows: WindowRow[] = [];
    const chunkRows = (await Promise.all(docs.map((d) => built.chunks.documentChunks(d.id)))).flat();
    const spans = chunkRows.map((c) => sentenceWindows(c.text));
    const texts = chunkRows.flatMap((c, i) => spans[i]!.map((w) => c.text.slice(w.start, w.end)));
    const vecs = await vectors.embed(embedder, texts, 'passage', (d, t) => log(`  embedded windows ${d}/${t}`));
    let w = 0;
    chunkRows.forEach((c, i) =>
      spans[i]!.forEach((span, wi) =>
        rows.push({ chunk_id: c.id, user_id: USER, project_id: PROJECT, document_id: c.document_id, window_index: wi, start: span.start, end: span.end, vector: vecs[w++]! }),
      ),
    );
    for (let i = 0; i < rows.length; i += 10000) await windows.add(rows.slice(i, i + 10000));
    await windows.optimize();
    writeFileSync(done, JSON.stringify({ windows: rows.length }));
    await windows.close();
  }
  const counts = JSON.parse(readFileSync(done, 'utf8')) as { windows: number };
  return { windows: await ChunkWindowIndex.open(built.store, embedder.dimension), windowCount: counts.windows };
}

interface Scores {
  ndcg10: number;
  /** nDCG@10 of each query, in input order (for the paired test). */
  perQuery: number[];
  recall100: number;
  /** Queries answered `weak` (nothing matched; the nearest shown) or with no results. */
  weakOrEmpty: number;
  msPerQuery: number;
}

/**
 * Each query through the retriever as the daemon runs it; documents ranked as the API's grouped form ranks them
 * (groupByDocument), which for the flat form is each document's first passage.
 */
async function evaluate(retriever: Retriever, queries: Query[], mode: SearchMode, reranker: CandidateReranker | null): Promise<Scores> {
  const perQuery: number[] = [];
  let recall = 0;
  let weakOrEmpty = 0;
  const t0 = performance.now();
  for (const q of queries) {
    const { ranked, weak, warnings } = await retriever.retrieve({ projectIds: [PROJECT], asker: USER, query: q.text, mode, reranker, list: 'first-page' });
    if (warnings.length) throw new Error(`query ${q.id}: ${warnings.join('; ')}`);
    if (weak || ranked.length === 0) weakOrEmpty++;
    const docs = groupByDocument(ranked, 1).map((g) => g.documentId);
    perQuery.push(ndcgAt(10, docs, q.relevant));
    recall += recallAt(100, docs, q.relevant);
  }
  return { ndcg10: mean(perQuery), perQuery, recall100: recall / queries.length, weakOrEmpty, msPerQuery: (performance.now() - t0) / queries.length };
}

export interface Lists {
  query: Query;
  vector: VectorHit[];
  keyword: KeywordHit[];
}

/** Both first-stage lists of each query as a search reads them (its keyword input, its order), read once and deeper than the defaults, for tuning fusion and floor offline. */
export async function readLists(built: Built, retriever: Retriever, queries: Query[], depth: { vector: number; keyword: number }): Promise<Lists[]> {
  const out: Lists[] = [];
  for (const query of queries) {
    const vector = await built.chunks.vectorSearch({ projectIds: [PROJECT], limit: depth.vector, vector: await retriever.queryVector(query.text, USER) });
    const { query: words, forms } = await retriever.keywordInput(query.text, [PROJECT]);
    const keyword = words || forms ? await built.chunks.keywordSearch({ projectIds: [PROJECT], limit: depth.keyword, query: words, forms }) : [];
    // In the retriever's order (ties by id), so a tuned ranking is the daemon's.
    vector.sort(nearestFirst);
    keyword.sort(bestMatchFirst);
    out.push({ query, vector, keyword });
  }
  return out;
}

/** nDCG@10 over read lists with a fusion, floor and depths (the ranking rankFirstStage gives the daemon). */
export function ndcgOf(lists: Lists[], opts: Pick<RetrieveOptions, 'fusion' | 'vectorDepth' | 'keywordDepth'>, floor: number | null): number[] {
  return lists.map(({ query, vector, keyword }) => {
    const v = vector.slice(0, opts.vectorDepth);
    const k = keyword.slice(0, opts.keywordDepth);
    const cut = { ...(v.length >= opts.vectorDepth ? { vector: v.at(-1) } : {}), ...(k.length >= opts.keywordDepth ? { keyword: k.at(-1) } : {}) };
    const { ranked } = rankFirstStage({ vector: v, keyword: k }, opts.fusion, floor, cut);
    return ndcgAt(10, docRanking(ranked.map((r) => r.chunk.document_id)), query.relevant);
  });
}

async function tune(built: Built, retriever: Retriever, train: Query[], builtin: ((p: BuiltinRerankParams) => CandidateReranker) | null): Promise<void> {
  log(`\ntuning on SciFact TRAIN (${train.length} queries); the test split is not read`);
  const lists = await readLists(built, retriever, train, { vector: 400, keyword: DEFAULT_RETRIEVE.keywordDepth });
  const floor = relevanceFloor(retriever.embedderId);

  log('\nfusion: train nDCG@10 by RRF k (rows) and keyword weight (columns; vector weight 1), no floor');
  const weights = [0.6, 0.8, 1, 1.25, 1.5, 2];
  log(`  k     ${weights.map((w) => `w=${w}`.padStart(8)).join('')}`);
  let best: { ndcg: number; fusion: Fusion } = { ndcg: -1, fusion: DEFAULT_RETRIEVE.fusion };
  const consider = (fusion: Fusion) => {
    const n = mean(ndcgOf(lists, { ...DEFAULT_RETRIEVE, fusion }, null));
    if (n > best.ndcg) best = { ndcg: n, fusion };
    return n;
  };
  for (const k of [10, 20, 30, 45, 60, 80, 120]) {
    log(`  ${String(k).padEnd(6)}${weights.map((w) => consider({ method: 'rrf', k, vectorWeight: 1, keywordWeight: w }).toFixed(4).padStart(8)).join('')}`);
  }
  log('fusion: train nDCG@10 of the convex combination of max-normalised scores by the vector list\'s weight α (keyword 1 − α), no floor');
  const alphas = [0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7];
  log(`  ${alphas.map((a) => `α=${a}`.padStart(8)).join('')}`);
  log(`  ${alphas.map((a) => consider({ method: 'convex', vectorWeight: a, keywordWeight: Number((1 - a).toFixed(2)) }).toFixed(4).padStart(8)).join('')}`);
  log('  the same, a candidate missing from a list that stopped at its depth counted at that list\'s last score (absent "last"; above: 0)');
  log(`  ${alphas.map((a) => consider({ method: 'convex', vectorWeight: a, keywordWeight: Number((1 - a).toFixed(2)), absent: 'last' }).toFixed(4).padStart(8)).join('')}`);
  log(`  best: ${JSON.stringify(best.fusion)}: ${best.ndcg.toFixed(4)} (the default: ${JSON.stringify(DEFAULT_RETRIEVE.fusion)})`);

  // Documents by their best passage (β = 0, what groupByDocument does) or helped by their second (s1 + β·s2).
  const fusion = best.fusion;
  for (const beta of [0, 0.1, 0.25, 0.5]) {
    const n = mean(
      lists.map(({ query, vector, keyword }) => {
        const { ranked } = rankFirstStage({ vector: vector.slice(0, DEFAULT_RETRIEVE.vectorDepth), keyword }, fusion, null);
        const byDoc = new Map<string, number[]>();
        for (const r of ranked) byDoc.set(r.chunk.document_id, [...(byDoc.get(r.chunk.document_id) ?? []), r.score]);
        const docs = [...byDoc].map(([d, s]) => [d, s[0]! + beta * (s[1] ?? 0)] as const).sort((a, b) => b[1] - a[1]).map(([d]) => d);
        return ndcgAt(10, docs, query.relevant);
      }),
    );
    log(`  documents by best passage + ${beta} × second (the best fusion): ${n.toFixed(4)}`);
  }
  for (const vectorDepth of [100, 200, 400]) {
    const n = mean(ndcgOf(lists, { ...DEFAULT_RETRIEVE, vectorDepth }, null));
    log(`  vector depth ${vectorDepth}: ${n.toFixed(4)}`);
  }

  // The floor: real queries should almost never be weak even with no word in common (vector mode), nonsense
  // almost always; and dropping the neighbours under it must not cost ranking quality.
  const calibration = nonsenseQueries(NONSENSE_CALIBRATION.count, NONSENSE_CALIBRATION.seed).map((text, i) => ({ id: `n${i}`, text, relevant: new Map<string, number>() }));
  const nonsense = await readLists(built, retriever, calibration, { vector: 1, keyword: 1 });
  const top = (l: Lists) => (l.vector[0] ? 1 - l.vector[0]._distance : -1);
  log(`\nfloor calibration: train queries vs ${calibration.length} nonsense queries (seed ${NONSENSE_CALIBRATION.seed}); the top neighbour's similarity`);
  const quantiles = (xs: number[]) => [0.01, 0.05, 0.5, 0.95, 0.99].map((q) => xs.sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!.toFixed(3)).join(' / ');
  log(`  train    p1 / p5 / p50 / p95 / p99: ${quantiles(lists.map(top))}`);
  log(`  nonsense p1 / p5 / p50 / p95 / p99: ${quantiles(nonsense.map(top))}; with a keyword hit: ${nonsense.filter((l) => l.keyword.length > 0).length}`);
  const noFloor = mean(ndcgOf(lists, DEFAULT_RETRIEVE, null));
  log('  floor   train weak in vector mode   nonsense weak (hybrid)   train hybrid nDCG@10 (no floor ' + noFloor.toFixed(4) + ')');
  const floors = [...new Set([...Array.from({ length: 16 }, (_, i) => Number((0.2 + 0.02 * i).toFixed(2))), ...(floor === null ? [] : [floor])])].sort((a, b) => a - b);
  for (const t of floors) {
    const trainWeak = lists.filter((l) => top(l) < t).length;
    const nonsenseWeak = nonsense.filter((l) => l.keyword.length === 0 && top(l) < t).length;
    const n = mean(ndcgOf(lists, DEFAULT_RETRIEVE, t));
    log(`  ${t.toFixed(2)}    ${pct(trainWeak, lists.length).padStart(8)}                  ${pct(nonsenseWeak, nonsense.length).padStart(8)}               ${n.toFixed(4)}`);
  }
  log(`  the default floor: ${floor}`);

  if (builtin) {
    log('\nbuiltin reranker λ (train nDCG@10):');
    for (const lambda of [0.25, 0.5, 1, 2]) log(`  λ=${lambda}: ${(await evaluate(retriever, train, 'hybrid', builtin({ lambda }))).ndcg10.toFixed(4)}`);
  }
}

async function main(): Promise<void> {
  if (!available()) {
    log(`skipped: ${SCIFACT} is not there (the shared eval data is needed)`);
    return;
  }
  const tuning = process.argv.includes('--tune');
  const withBuiltin = !process.argv.includes('--no-builtin');
  const load = loadavg()[0]!;
  const spec = process.argv.includes('--embedder') ? process.argv[process.argv.indexOf('--embedder') + 1]! : 'builtin';
  const embedder = createEmbedder({ embedder: spec, reranker: 'none', modelCacheDir: join(CACHE, 'models'), ollamaHost: '', openaiBaseUrl: '' });
  if (!(embedder instanceof BuiltinEmbedder)) throw new Error('--embedder must be builtin, builtin:fp32 or builtin:int8');
  await embedder.init();
  const vectors = VectorCache.open(join(CACHE, 'vectors-builtin.bin'), embedder.id, embedder.dimension);
  const built = await buildChunks(embedder);
  const windows = withBuiltin ? await buildWindows(built, embedder, vectors) : null;
  const chunksBytes = dirSize(join(built.dir, 'chunks.lance'));
  const windowsBytes = windows ? dirSize(join(built.dir, 'chunk_windows.lance')) : 0;
  const ann = await built.chunks.vectorIndex();
  const annNote = ann
    ? `Vector search goes through the product's HNSW index (built past ${DEFAULT_ANN.minRows.toLocaleString('en')} chunks; ${ann.indexedRows} rows indexed, ef ${DEFAULT_ANN.ef}), as it does in the daemon.`
    : 'Vector search is an exact scan (the library is below the HNSW threshold).';
  log(`index: ${built.chunkCount} chunks (${(chunksBytes / 2 ** 20).toFixed(0)} MiB)${windows ? `, ${windows.windowCount} windows (${(windowsBytes / 2 ** 20).toFixed(0)} MiB)` : ''}. ${annNote}`);

  // Query vectors go through the same content cache (query kind), so reruns embed nothing.
  const test = readSplit('test');
  const train = tuning ? readSplit('train') : [];
  const check = nonsenseQueries(NONSENSE_CHECK.count, NONSENSE_CHECK.seed).map((text, i) => ({ id: `nonsense-${i}`, text, relevant: new Map<string, number>() }));
  const calibration = tuning ? nonsenseQueries(NONSENSE_CALIBRATION.count, NONSENSE_CALIBRATION.seed) : [];
  const qcache = new QueryVectorCache(10_000);
  const allQ = [...test.map((q) => q.text), ...train.map((q) => q.text), ...check.map((q) => q.text), ...calibration];
  const qv = await vectors.embed(embedder, allQ, 'query');
  allQ.forEach((q, i) => qcache.set(embedder.id, USER, q, qv[i]!));
  // The daemon's defaults; only the reranker's deadline is lifted, so a busy machine cannot turn a run into fused order.
  // As the daemon does: a query whose language cannot be told is read in the languages the library's documents are in.
  const held = await libraryLanguages(built);
  log(`library languages (documents): ${held.slice(0, 8).map((l) => `${l.language} ${l.documents}`).join(', ')}${held.length > 8 ? ', …' : ''}`);
  const deps = { chunks: built.chunks, embedder, cache: qcache, libraryLanguages: async () => held.map((l) => l.language) };
  const retriever = new Retriever(deps, { ...DEFAULT_RETRIEVE, rerankTimeoutMs: 600_000 });
  const builtin = windows ? (p: BuiltinRerankParams) => new BuiltinReranker(embedder, windows.windows, p) : null;

  if (tuning) await tune(built, retriever, train, builtin);

  const rows: [string, Scores][] = [];
  for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
    rows.push([mode === 'hybrid' ? 'hybrid (the default)' : mode, await evaluate(retriever, test, mode, null)]);
    log(`${rows.at(-1)![0]}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);
  }
  const floorless = new Retriever(deps, { ...DEFAULT_RETRIEVE, floor: null });
  rows.push(['hybrid without the relevance floor', await evaluate(floorless, test, 'hybrid', null)]);
  log(`${rows.at(-1)![0]}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);
  const rrf = new Retriever(deps, { ...DEFAULT_RETRIEVE, fusion: PREVIOUS_FUSION });
  rows.push(['hybrid with rank fusion (RRF k 60, the previous default)', await evaluate(rrf, test, 'hybrid', null)]);
  log(`${rows.at(-1)![0]}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);
  if (builtin) {
    rows.push([`hybrid + builtin rerank (λ=${DEFAULT_BUILTIN_PARAMS.lambda})`, await evaluate(retriever, test, 'hybrid', builtin(DEFAULT_BUILTIN_PARAMS))]);
    log(`${rows.at(-1)![0]}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);
  }
  const nonsense = await evaluate(retriever, check, 'hybrid', null);
  const hybrid = rows.find(([n]) => n.startsWith('hybrid (the default)'))![1];
  const floorlessScores = rows.find(([n]) => n === 'hybrid without the relevance floor')![1];
  const floorP = pairedPermutationP(hybrid.perQuery, floorlessScores.perQuery);
  const rrfScores = rows.find(([n]) => n.startsWith('hybrid with rank fusion'))![1];
  const fusionP = pairedPermutationP(hybrid.perQuery, rrfScores.perQuery);

  let ingestCost = '';
  let verdict = '';
  if (builtin && windows) {
    // Extra ingest time of the builtin reranker's windows, measured fresh (no cache) on a sample with the
    // daemon's own embedder settings: the chunk embeds vs the window embeds the write hook adds.
    const sample = readCorpus().slice(0, 60);
    const sampleChunks = sample.flatMap((d) => chunkAbstract(d, embedder.tokenizer, embedder.maxTokens, OVERLAP_TOKENS).map((c) => ({ d, c })));
    let t = performance.now();
    await embedder.embed(sampleChunks.map(({ c }) => c.embedText), { kind: 'passage' });
    const chunkMs = performance.now() - t;
    t = performance.now();
    const sampleWindows = await windowRows(
      embedder,
      sampleChunks.map(({ d, c }) => ({ id: `${d.id}:${c.index}`, user_id: USER, project_id: PROJECT, document_id: d.id, text: c.text })),
    );
    const windowMs = performance.now() - t;
    ingestCost =
      `Ingest cost of the builtin reranker (60 abstracts, ${sampleChunks.length} chunks, ${sampleWindows.length} windows, embedded fresh): ` +
      `chunks ${(chunkMs / 1000).toFixed(1)} s, windows +${(windowMs / 1000).toFixed(1)} s (+${((100 * windowMs) / chunkMs).toFixed(0)} % ingest embedding time).\n`;
    log(ingestCost.trim());
    // "Beats" means a difference a paired test can tell from noise (p < 0.05), not a higher fourth decimal.
    const reranked = rows.at(-1)![1];
    const p = pairedPermutationP(reranked.perQuery, hybrid.perQuery);
    const compared = `${reranked.ndcg10.toFixed(4)} vs ${hybrid.ndcg10.toFixed(4)}, paired randomization test p = ${p.toFixed(2)}`;
    verdict =
      reranked.ndcg10 > hybrid.ndcg10 && p < 0.05
        ? `The builtin reranker beats fusion alone on test (${compared}): it may be the default reranker.\n`
        : `The builtin reranker does not beat fusion alone on test (${compared}), so the default reranker stays \`none\` (hybrid fusion).\n`;
  }

  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}, 1-min load average at start ${load.toFixed(1)}`;
  const { fusion, firstPageKeywordDepth, vectorDepth } = DEFAULT_RETRIEVE;
  const table = [
    '| pipeline | nDCG@10 | recall@100 | weak or empty | ms/query |',
    '|---|---|---|---|---|',
    ...rows.map(([name, s]) => `| ${name} | ${s.ndcg10.toFixed(3)} | ${s.recall100.toFixed(3)} | ${s.weakOrEmpty} of ${test.length} | ${s.msPerQuery.toFixed(1)} |`),
    ...Object.entries(BASELINES).map(([name, v]) => `| *published:* ${name} | ${v.toFixed(3)} | – | – | – |`),
  ].join('\n');
  const floorLine =
    `Relevance floor (cosine ${relevanceFloor(embedder.id)}): ${nonsense.weakOrEmpty} of ${check.length} generated nonsense queries (bench/nonsense.ts, seed ${NONSENSE_CHECK.seed}) ` +
    `come back weak or empty (${pct(nonsense.weakOrEmpty, check.length)}; target ≥ 90 %); ${hybrid.weakOrEmpty} of ${test.length} test queries do. ` +
    `Test nDCG@10 with the floor ${hybrid.ndcg10.toFixed(4)}, without ${floorlessScores.ndcg10.toFixed(4)} (paired randomization test p = ${floorP.toFixed(2)}).\n` +
    `Score fusion against the previous rank fusion on test: ${hybrid.ndcg10.toFixed(4)} vs ${rrfScores.ndcg10.toFixed(4)} (paired randomization test p = ${fusionP.toFixed(3)}).\n`;
  const section =
    `SciFact test split (300 queries, 339 judgments), \`npm run bench:quality\`, ${new Date().toISOString().slice(0, 10)}, ${machine}, embedder ${embedder.id}.\n` +
    `Corpus: 5,183 abstracts → ${built.chunkCount} chunks (the product chunker, 256 model tokens, 32 overlap)` +
    `${windows ? ` → ${windows.windowCount} sentence windows for the builtin reranker` : ''}. ` +
    `Ranking as the API returns it (src/search/retrieve.ts with the daemon's defaults for a first page: keyword list ${firstPageKeywordDepth}, vector list ${vectorDepth}, ` +
    `${fusion.method === 'rrf' ? `RRF k ${fusion.k}` : 'convex combination of max-normalised scores'}, vector weight ${fusion.vectorWeight}, keyword weight ${fusion.keywordWeight}, ` +
    `the relevance floor); a document ranks at its best passage, as in the grouped form. ` +
    `Index size: chunks ${(chunksBytes / 2 ** 20).toFixed(0)} MiB${windows ? `, windows ${(windowsBytes / 2 ** 20).toFixed(0)} MiB` : ''}. ` +
    `${annNote} Fusion, floor and the builtin reranker's λ were tuned on the train split only (\`-- --tune\`).\n${ingestCost}\n${table}\n\n${floorLine}${verdict}`;
  process.stdout.write(`\n${section}\n`);
  const bm = join(REPO, 'docs/BENCHMARKS.md');
  const doc = readFileSync(bm, 'utf8');
  // Another precision than the default prints its figures but leaves the section (the default's) as it is.
  if (embedder.precision === DEFAULT_BUILTIN_PRECISION) writeFileSync(bm, doc.replace(/## Search quality\n[\s\S]*?(?=\n## |$)/, `## Search quality\n\n${section}`));
  if (windows) await windows.windows.close();
  built.store.close();
  await embedder.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
