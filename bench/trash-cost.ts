/**
 * npm run bench:trash [-- --chunks 100000 --queries 200]
 *
 * What keeping trashed documents' chunks out of the candidate lists costs a search (ChunkSearchScope.exclude in
 * src/store/lancedb/chunk-search.ts), in process, on a chunk index with its vector and keyword indexes built: one
 * owner's library (the unfiltered `soleScope` path) with an empty trash, with a trash of 200 chunks (read as that many
 * more candidates) and of 1,000 (the most read that way), and one of 2,000 chunks (kept out by the prefilter,
 * `document_id NOT IN (…)`, off the fast path). Per case: CPU ms per search (the process's, every thread: a vector list
 * of 200 and a keyword list of 200, as a first page reads them) and whether each list came back full. Random 384-d
 * unit vectors and texts of common words stand for a library: the cost is the index's, not the model's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChunkRow } from '../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { rng } from './scifact.js';

const { values: argv } = parseArgs({ options: { chunks: { type: 'string', default: '100000' }, queries: { type: 'string', default: '200' } } });
const N = Number(argv.chunks);
const QUERIES = Number(argv.queries);
const DIM = 384;
const PER_DOC = 10;
const DEPTH = 200;
const WORDS = 'ocean winter lamp oil keeper storm harbour tide glacier colony krill nest feather dive ice chick north slope ledger note'.split(' ');
const rand = rng(7);
const unit = (): Float32Array => {
  const v = Float32Array.from({ length: DIM }, () => rand() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const text = () => Array.from({ length: 30 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

const dir = mkdtempSync(join(tmpdir(), 'docsearch-bench-trash-'));
const embedder = { id: 'builtin:all-MiniLM-L6-v2', dimension: DIM };
try {
  const store = await VectorStore.open(join(dir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId: embedder.id });
  let rows: ChunkRow[] = [];
  for (let i = 0; i < N; i++) {
    const doc = `doc${Math.floor(i / PER_DOC)}`;
    const t = text();
    rows.push({ id: `${doc}:${i % PER_DOC}`, user_id: 'u', project_id: 'p', document_id: doc, chunk_index: i % PER_DOC, text: t, search_text: t, heading: null, page_start: null, page_end: null, vector: unit() });
    if (rows.length === 5000) {
      await chunks.add(rows, embedder);
      rows = [];
    }
  }
  if (rows.length) await chunks.add(rows, embedder);
  await chunks.optimize();
  const queries = Array.from({ length: QUERIES }, () => ({ vector: unit(), query: `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]}` }));
  const trash = (docs: number) => ({ documentIds: Array.from({ length: docs }, (_, k) => `doc${k * 7}`), rows: docs * PER_DOC });
  const cases = [
    { name: 'empty trash (fast path)', exclude: undefined },
    { name: '200 chunks in the trash (fast path, read 400)', exclude: trash(20) },
    { name: '1,000 chunks in the trash (fast path, read 1,200)', exclude: trash(100) },
    { name: '2,000 chunks in the trash (prefilter)', exclude: trash(200) },
  ];
  const out: string[] = [];
  for (const c of cases) {
    const run = async (q: (typeof queries)[number]) => {
      const scope = { projectIds: ['p'], limit: DEPTH, ...(c.exclude ? { exclude: c.exclude } : {}) };
      const [v, k] = await Promise.all([chunks.vectorSearch({ ...scope, vector: q.vector }), chunks.keywordSearch({ ...scope, query: q.query })]);
      const excluded = new Set(c.exclude?.documentIds);
      if ([...v, ...k].some((h) => excluded.has(h.document_id))) throw new Error(`${c.name}: an excluded chunk was listed`);
      return v.length === DEPTH && k.length === DEPTH;
    };
    for (const q of queries.slice(0, 20)) await run(q);
    let full = 0;
    const cpu = process.cpuUsage();
    for (const q of queries) if (await run(q)) full++;
    const used = process.cpuUsage(cpu);
    out.push(`| ${c.name} | ${((used.user + used.system) / 1000 / queries.length).toFixed(2)} | ${full}/${queries.length} |`);
  }
  await chunks.close();
  store.close();
  console.log(`${N.toLocaleString('en')} chunks, ${QUERIES} searches (vector + keyword lists of ${DEPTH}); ${cpus()[0]?.model ?? ''}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`);
  console.log('| trash | CPU ms per search | lists full |\n|---|---|---|');
  console.log(out.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
