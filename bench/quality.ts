/**
 * npm run bench:quality [-- --tune]
 *
 * SciFact through the product's own code: the chunker (src/ingest/chunk.ts), the built-in embedder, the
 * LanceDB chunk store and window store in a temp-free cache dir, and the search retriever
 * (src/search/retrieve.ts) — not over HTTP. Prints nDCG@10 and recall@100 on the TEST split for keyword,
 * vector, hybrid and hybrid + each reranker, beside the published baselines, and rewrites the "Search
 * quality" section of docs/BENCHMARKS.md. `--tune` grid-searches the builtin reranker on the TRAIN split
 * only (never the test split) and prints the best setting.
 *
 * Vectors are cached by content under bench/.cache/ (vector-cache.ts), and the built LanceDB index under
 * bench/.cache/scifact-<key>/ keyed by corpus + model + chunker/window code, so reruns take seconds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { toRows } from '../src/ingest/write.js';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';
import { ChunkWindowIndex, type WindowRow } from '../src/store/lancedb/chunk-windows.js';
import { ChunkIndex, DEFAULT_ANN, type ChunkRow } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { QueryVectorCache } from '../src/search/query-cache.js';
import type { SearchMode } from '../src/search/query.js';
import { BuiltinReranker, DEFAULT_BUILTIN_PARAMS, type BuiltinRerankParams } from '../src/search/rerank/builtin.js';
import type { CandidateReranker } from '../src/search/rerank/stage.js';
import { Retriever } from '../src/search/retrieve.js';
import { sentenceWindows } from '../src/search/sentence-windows.js';
import { windowRows } from '../src/search/rerank/window-writes.js';
import { available, chunkAbstract, docRanking, ndcgAt, pairedPermutationP, readCorpus, readSplit, recallAt, SCIFACT } from './scifact.js';
import { VectorCache } from './vector-cache.js';

const REPO = resolve(import.meta.dirname, '..');
const CACHE = join(REPO, 'bench/.cache');
const OVERLAP_TOKENS = 32; // what the daemon passes to the pipeline (src/server/daemon.ts)
const USER = 'bench-user';
const PROJECT = 'scifact';
const BASELINES = { 'BM25 [BEIR]': 0.665, 'BM25 + MiniLM cross-encoder [BEIR]': 0.688, 'all-MiniLM-L6-v2 dense [MTEB]': 0.645 };

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sha = (parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);

function dirSize(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirSize(p) : statSync(p).size;
  }
  return total;
}

interface Built {
  chunks: ChunkIndex;
  windows: ChunkWindowIndex;
  store: VectorStore;
  dir: string;
  chunkCount: number;
  windowCount: number;
}

async function buildIndex(embedder: BuiltinEmbedder, vectors: VectorCache): Promise<Built> {
  const corpusStat = statSync(join(SCIFACT, 'corpus.jsonl'));
  const code = ['src/ingest/chunk.ts', 'src/ingest/sentences.ts', 'src/search/sentence-windows.ts', 'src/ingest/write.ts', 'src/store/lancedb/chunks.ts'].map((f) =>
    readFileSync(join(REPO, f), 'utf8'),
  );
  const key = sha([String(corpusStat.size), String(corpusStat.mtimeMs), embedder.id, String(OVERLAP_TOKENS), ...code]);
  const dir = join(CACHE, `scifact-${key}`);
  const done = join(dir, 'COMPLETE');
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true });
    const docs = readCorpus();
    const t0 = performance.now();
    const perDoc = docs.map((d) => chunkAbstract(d, embedder.tokenizer, embedder.maxTokens, OVERLAP_TOKENS));
    const all = perDoc.flat();
    log(`chunked ${docs.length} abstracts into ${all.length} chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const chunkVecs = await vectors.embed(embedder, all.map((c) => c.embedText), 'passage', (d, t) => log(`  embedded chunks ${d}/${t}`));
    const windowSpans = all.map((c) => sentenceWindows(c.text));
    const windowTexts = all.flatMap((c, i) => windowSpans[i]!.map((w) => c.text.slice(w.start, w.end)));
    const windowVecs = await vectors.embed(embedder, windowTexts, 'passage', (d, t) => log(`  embedded windows ${d}/${t}`));

    const store = await VectorStore.open(dir);
    const chunks = await ChunkIndex.open(store, { embedderId: embedder.id });
    const windows = await ChunkWindowIndex.open(store, embedder.dimension);
    const rows: ChunkRow[] = [];
    const wrows: WindowRow[] = [];
    let k = 0;
    let w = 0;
    docs.forEach((d, di) => {
      const target = { documentId: d.id, userId: USER, projectId: PROJECT };
      const cs = perDoc[di]!;
      const vs = chunkVecs.slice(k, k + cs.length);
      const made = toRows(target, cs, vs);
      rows.push(...made);
      made.forEach((row, ci) => {
        windowSpans[k + ci]!.forEach((span, wi) => {
          wrows.push({ chunk_id: row.id, user_id: USER, project_id: PROJECT, document_id: d.id, window_index: wi, start: span.start, end: span.end, vector: windowVecs[w++]! });
        });
      });
      k += cs.length;
    });
    for (let i = 0; i < rows.length; i += 2000) await chunks.add(rows.slice(i, i + 2000), embedder);
    await chunks.optimize();
    for (let i = 0; i < wrows.length; i += 10000) await windows.add(wrows.slice(i, i + 10000));
    await windows.optimize();
    writeFileSync(done, JSON.stringify({ chunks: rows.length, windows: wrows.length }));
    store.close();
  }
  const counts = JSON.parse(readFileSync(done, 'utf8')) as { chunks: number; windows: number };
  const store = await VectorStore.open(dir);
  return {
    store,
    dir,
    chunks: await ChunkIndex.open(store, { embedderId: embedder.id }),
    windows: await ChunkWindowIndex.open(store, embedder.dimension),
    chunkCount: counts.chunks,
    windowCount: counts.windows,
  };
}

interface Scores {
  ndcg10: number;
  /** nDCG@10 of each query, in input order (for the paired test). */
  perQuery: number[];
  recall100: number;
  msPerQuery: number;
}

async function evaluate(
  retriever: Retriever,
  queries: { id: string; text: string; relevant: Map<string, number> }[],
  mode: SearchMode,
  reranker: CandidateReranker | null,
): Promise<Scores> {
  const perQuery: number[] = [];
  let recall = 0;
  const t0 = performance.now();
  for (const q of queries) {
    const { ranked, warnings } = await retriever.retrieve({ userId: USER, query: q.text, mode, limit: 200, reranker });
    if (warnings.length) throw new Error(`query ${q.id}: ${warnings.join('; ')}`);
    const docs = docRanking(ranked.map((r) => r.chunk.document_id));
    perQuery.push(ndcgAt(10, docs, q.relevant));
    recall += recallAt(100, docs, q.relevant);
  }
  return { ndcg10: perQuery.reduce((s, x) => s + x, 0) / queries.length, perQuery, recall100: recall / queries.length, msPerQuery: (performance.now() - t0) / queries.length };
}

async function main(): Promise<void> {
  if (!available()) {
    log(`skipped: ${SCIFACT} is not there (the shared eval data is needed)`);
    return;
  }
  const tune = process.argv.includes('--tune');
  const embedder = new BuiltinEmbedder({ modelCacheDir: join(CACHE, 'models') });
  await embedder.init();
  const vectors = VectorCache.open(join(CACHE, 'vectors-builtin.bin'), embedder.id, embedder.dimension);
  const built = await buildIndex(embedder, vectors);
  const chunksBytes = dirSize(join(built.dir, 'chunks.lance'));
  const windowsBytes = dirSize(join(built.dir, 'chunk_windows.lance'));
  const ann = await built.chunks.vectorIndex();
  const annNote = ann
    ? `Vector search goes through the product's HNSW index (built past ${DEFAULT_ANN.minRows.toLocaleString('en')} chunks; ${ann.indexedRows} rows indexed, ef ${DEFAULT_ANN.ef}), as it does in the daemon.`
    : 'Vector search is an exact scan (the library is below the HNSW threshold).';
  log(`index: ${built.chunkCount} chunks (${(chunksBytes / 2 ** 20).toFixed(0)} MiB), ${built.windowCount} windows (${(windowsBytes / 2 ** 20).toFixed(0)} MiB). ${annNote}`);

  // Query vectors go through the same content cache (query kind), so reruns embed nothing.
  const test = readSplit('test');
  const train = tune ? readSplit('train') : [];
  const qcache = new QueryVectorCache(4000);
  const allQ = [...test, ...train];
  const qv = await vectors.embed(embedder, allQ.map((q) => q.text), 'query');
  allQ.forEach((q, i) => qcache.set(embedder.id, q.text, qv[i]!));
  const retriever = new Retriever({ chunks: built.chunks, embedder, cache: qcache }, { candidates: 200, rerankDepth: 50, rerankTimeoutMs: 60_000 });
  const builtin = (p: BuiltinRerankParams) => new BuiltinReranker(embedder, built.windows, p);

  if (tune) {
    log(`tuning the builtin reranker on SciFact TRAIN (${train.length} queries)`);
    const base = await evaluate(retriever, train, 'hybrid', null);
    log(`  hybrid (no rerank)      nDCG@10 ${base.ndcg10.toFixed(4)}`);
    for (const lambda of [0.25, 0.5, 1, 1.5, 2, 3, 5]) {
      const s = await evaluate(retriever, train, 'hybrid', builtin({ lambda }));
      log(`  builtin lambda=${String(lambda).padEnd(5)}    nDCG@10 ${s.ndcg10.toFixed(4)}`);
    }
  }

  const rows: [string, Scores][] = [];
  for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
    rows.push([mode, await evaluate(retriever, test, mode, null)]);
    log(`${mode}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);
  }
  rows.push([`hybrid + builtin rerank (λ=${DEFAULT_BUILTIN_PARAMS.lambda})`, await evaluate(retriever, test, 'hybrid', builtin(DEFAULT_BUILTIN_PARAMS))]);
  log(`${rows.at(-1)![0]}: ${rows.at(-1)![1].ndcg10.toFixed(4)}`);

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
  const ingestCost =
    `Ingest cost of the builtin reranker (60 abstracts, ${sampleChunks.length} chunks, ${sampleWindows.length} windows, embedded fresh): ` +
    `chunks ${(chunkMs / 1000).toFixed(1)} s, windows +${(windowMs / 1000).toFixed(1)} s (+${((100 * windowMs) / chunkMs).toFixed(0)} % ingest embedding time).`;
  log(ingestCost);

  // "Beats" means a difference a paired test can tell from noise (p < 0.05), not a higher fourth decimal.
  const fusion = rows.find(([n]) => n === 'hybrid')![1];
  const reranked = rows.at(-1)![1];
  const p = pairedPermutationP(reranked.perQuery, fusion.perQuery);
  const compared = `${reranked.ndcg10.toFixed(4)} vs ${fusion.ndcg10.toFixed(4)}, paired randomization test p = ${p.toFixed(2)}`;
  const verdict =
    reranked.ndcg10 > fusion.ndcg10 && p < 0.05
      ? `The builtin reranker beats fusion alone on test (${compared}): it may be the default reranker.`
      : `The builtin reranker does not beat fusion alone on test (${compared}), so the default reranker stays \`none\` (hybrid fusion).`;

  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}`;
  const table = [
    '| pipeline | nDCG@10 | recall@100 | ms/query |',
    '|---|---|---|---|',
    ...rows.map(([name, s]) => `| ${name} | ${s.ndcg10.toFixed(3)} | ${s.recall100.toFixed(3)} | ${s.msPerQuery.toFixed(1)} |`),
    ...Object.entries(BASELINES).map(([name, v]) => `| *published:* ${name} | ${v.toFixed(3)} | – | – |`),
  ].join('\n');
  const section =
    `SciFact test split (300 queries, 339 judgments), \`npm run bench:quality\`, ${new Date().toISOString().slice(0, 10)}, ${machine}.\n` +
    `Corpus: 5,183 abstracts → ${built.chunkCount} chunks (the product chunker, 256 model tokens, 32 overlap) → ` +
    `${built.windowCount} sentence windows for the builtin reranker. A document scores as its best chunk. ` +
    `Index size: chunks ${(chunksBytes / 2 ** 20).toFixed(0)} MiB, windows ${(windowsBytes / 2 ** 20).toFixed(0)} MiB. ` +
    `${annNote} The builtin reranker's λ was tuned on the train split only.\n${ingestCost}\n\n${table}\n\n${verdict}\n`;
  process.stdout.write(`\n${section}\n`);
  const bm = join(REPO, 'docs/BENCHMARKS.md');
  const doc = readFileSync(bm, 'utf8');
  const next = doc.replace(/## Search quality\n[\s\S]*?(?=\n## |$)/, `## Search quality\n\n${section}`);
  writeFileSync(bm, next);
  built.store.close();
  await embedder.close();
}

await main();
