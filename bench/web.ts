/**
 * npm run bench:web
 *
 * Server time of the search page (GET /search, rendered HTML) at 10,000 chunks, through a real daemon and a
 * logged-in web session: the grouped first page (the default), its Next page through the cursor, and the
 * passages view. The library is written straight into the data dir through the product's stores
 * while the daemon is stopped (as bench/search.ts does): 200 synthetic field-note passages, really embedded
 * with the built-in model, replicated to 10,000 chunks (1,000 documents of 10 chunks) with small vector noise
 * and a varied text. Every query is new to the daemon, so each includes its query embedding. Server time is
 * the daemon's own access-log `ms` for the request (receiving it to the last byte of HTML); the client's
 * wall time and the daemon's CPU time per page are recorded beside it. Then the library pages on the same
 * 1,000 documents: the Documents list page by page to its end (keyset cursors, newest first and by name), and
 * document pages with their text preview; and, in this process, first-page thumbnails of a real PDF (the
 * renderer's worker thread, cold and warm). Rewrites the "Web" section of docs/BENCHMARKS.md.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BuiltinEmbedder } from '../src/models/builtin/minilm-embedder.js';
import { type ChunkRow, chunkId } from '../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../src/store/lancedb/chunks.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { openSqlite } from '../src/store/sql/sqlite.js';
import { DocumentStore } from '../src/store/sql/documents.js';
import { JobStore } from '../src/store/sql/jobs.js';
import { ProjectStore } from '../src/store/sql/projects.js';
import { UserStore } from '../src/store/sql/users.js';
import { addUser, removeDir, startDaemon, TEST_MODEL_CACHE, type Daemon } from '../test/helpers/daemon.js';
import { WebClient } from '../test/server/web-client.js';

const REPO = resolve(import.meta.dirname, '..');
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 10_000);
const QUERIES = 200;
const log = (m: string) => process.stderr.write(`${m}\n`);

const SUBJECTS = ['marmot colonies', 'glacier tongues', 'alpine meadows', 'edelweiss ledges', 'golden eagles', 'scree slopes', 'snow fields', 'ibex herds', 'moraine ridges', 'spring meltwater'];
const VERBS = ['shift with', 'depend on', 'recover after', 'retreat under', 'thrive near', 'are surveyed for'];
const OBJECTS = ['late frost', 'summer storms', 'grazing pressure', 'warming winters', 'rock fall', 'tourist trails', 'avalanche paths'];

/** A deterministic pseudo-random source (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function passages(n: number, rand: () => number): string[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const sentences = Array.from({ length: 6 }, () => `The ${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} on transect ${Math.floor(rand() * 90) + 1}.`);
    return `Field note ${i + 1}. ${sentences.join(' ')}`;
  });
}

function perturb(v: Float32Array, sigma: number, rand: () => number): Float32Array {
  const out = new Float32Array(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    out[i] = v[i]! + sigma * Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
    n += out[i]! * out[i]!;
  }
  n = Math.sqrt(n);
  return out.map((x) => x / n);
}

async function populate(dataDir: string, email: string, embedder: BuiltinEmbedder): Promise<void> {
  const rand = rng(7);
  const texts = passages(200, rand);
  const vectors = await embedder.embed(texts, { kind: 'passage' });
  const sqlite = await openSqlite(join(dataDir, 'docsearch.db'));
  const now = () => Date.now();
  const user = (await new UserStore(sqlite.db, now).findByEmail(email))!;
  const project = await new ProjectStore(sqlite.db, now).ensureDefault(user.id);
  const jobs = new JobStore(sqlite.db, now);
  const documents = new DocumentStore(sqlite.db, jobs, now);
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId: embedder.id });
  let rows: ChunkRow[] = [];
  let documentId = '';
  for (let i = 0; i < CHUNKS; i++) {
    if (i % 10 === 0) {
      const { document } = await documents.createQueued({
        userId: user.id,
        projectId: project.id,
        filename: `field-notes-${i / 10 + 1}.pdf`,
        contentType: 'application/pdf',
        sizeBytes: 40_000,
        sha256: `bench-${i}`,
        metadata: {},
      });
      documentId = document.id;
    }
    const base = i % texts.length;
    const copy = Math.floor(i / texts.length);
    const text = copy === 0 ? texts[base]! : `${texts[base]} (copy ${copy})`;
    rows.push({
      id: chunkId(documentId, i % 10),
      user_id: user.id,
      project_id: project.id,
      document_id: documentId,
      chunk_index: i % 10,
      text,
      search_text: text,
      heading: `Survey › Transects ${base + 1}`,
      page_start: (i % 10) + 1,
      page_end: (i % 10) + 1,
      vector: copy === 0 ? vectors[base]! : perturb(vectors[base]!, 0.01, rand),
    });
    if (rows.length >= 5000) {
      await chunks.add(rows, { id: embedder.id, dimension: 384 });
      rows = [];
    }
  }
  if (rows.length) await chunks.add(rows, { id: embedder.id, dimension: 384 });
  await chunks.optimize();
  for (let job = await jobs.claim('bench', 60_000); job; job = await jobs.claim('bench', 60_000)) {
    await documents.markReady(job.documentId, job, { chunkCount: 10, pages: 10, warnings: [], embedderId: embedder.id });
  }
  store.close();
  await sqlite.close();
}

function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The daemon's access-log `ms` for every GET of a path matching `path` so far. */
function serverTimes(d: Daemon, path: RegExp = /^\/search$/): number[] {
  return d
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"path":"/'))
    .map((l) => JSON.parse(l) as { path: string; ms: number })
    .filter((l) => path.test(l.path))
    .map((l) => l.ms);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-web-'));
  let d = await startDaemon({ dataDir, timeoutMs: 120_000 });
  const user = await addUser(d);
  await d.stop();
  const embedder = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE });
  const t0 = performance.now();
  await populate(dataDir, user.email, embedder);
  await embedder.close();
  log(`${CHUNKS} chunks written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  d = await startDaemon({ dataDir, timeoutMs: 120_000 });
  const web = new WebClient(d);
  await web.login(user.email, user.password);
  const rand = rng(99);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const queries = Array.from({ length: QUERIES + 10 }, (_, i) => `how do ${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${i}`);
  for (const q of queries.slice(0, 10)) await web.get(`/search?q=${encodeURIComponent(q)}`); // warm-up
  await new Promise((r) => setTimeout(r, 300)); // the access log is written asynchronously
  const load = loadavg()[0]!;

  /**
   * One kind of page for every query: its server times (access log), client wall times, daemon CPU per page and
   * results per page. `href` gives the page's path for a query, from the previous kind's page when it follows a link.
   */
  async function measure(name: string, href: (q: string, i: number) => string): Promise<Kind> {
    const before = serverTimes(d).length;
    const wall: number[] = [];
    let results = 0;
    const cpu0 = processCpuMs(d.proc.pid!);
    for (const [i, q] of queries.slice(10).entries()) {
      const s = performance.now();
      const res = await web.get(href(q, i));
      wall.push(performance.now() - s);
      if (res.status !== 200) throw new Error(`${name}: GET ${href(q, i)} answered ${res.status}`);
      results += (res.text.match(/<li class="result"/g) ?? []).length;
      nextLinks[i] = /<a href="([^"]+)" rel="next">/.exec(res.text)?.[1]?.replaceAll('&amp;', '&') ?? '';
    }
    const cpuMs = (processCpuMs(d.proc.pid!) - cpu0) / QUERIES;
    await new Promise((r) => setTimeout(r, 300));
    const server = serverTimes(d).slice(before).sort((a, b) => a - b);
    if (server.length !== QUERIES) throw new Error(`${name}: expected ${QUERIES} access-log lines, got ${server.length}`);
    wall.sort((a, b) => a - b);
    return { name, server, wall, cpuMs, results: results / QUERIES };
  }
  const nextLinks: string[] = [];
  const kinds: Kind[] = [];
  kinds.push(await measure('documents, page 1 (the default)', (q) => `/search?q=${encodeURIComponent(q)}`));
  const secondPages = [...nextLinks];
  if (secondPages.some((h) => !h)) throw new Error('a first page had no Next link');
  kinds.push(await measure('documents, page 2 (Next)', (_q, i) => secondPages[i]!));
  kinds.push(await measure('passages, page 1', (q) => `/search?q=${encodeURIComponent(q)}&view=passages`));
  const library = await libraryPages(d, web);
  await d.stop();
  removeDir(dataDir);

  const f = (n: number) => n.toFixed(1);
  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}`;
  const rows = kinds.map(
    (k) =>
      `| ${k.name} | ${f(pct(k.server, 50))} | ${f(pct(k.server, 95))} | ${f(k.server.at(-1)!)} | ${f(pct(k.wall, 50))} / ${f(pct(k.wall, 95))} | ${f(k.cpuMs)} | ${f(k.results)} |`,
  );
  const section =
    `\`npm run bench:web\`, ${new Date().toISOString().slice(0, 10)}, ${machine}; 1-min load average at start ${load.toFixed(1)} ` +
    `(${load >= availableParallelism() ? 'the machine was shared with other jobs' : 'no other jobs running'}). GET /search?q=… rendered to HTML through a logged-in session ` +
    `(20 results per page, hybrid, no reranker — the default), ${CHUNKS.toLocaleString('en')} chunks in 1,000 documents, ${QUERIES} distinct queries after 10 warm-up ones, ` +
    `each page kind in turn: the grouped first page (one entry per document, its best passages under it: the default), its Next page (the cursor), and the passages view. ` +
    `Every query matches every chunk's words, so each page fills its keyword list (200 for a first page, 1,000 for a later one) and fuses it with the vector list (200) and checks every candidate document. ` +
    `A first page is new to the daemon, so it includes its query embedding; a Next page reuses the cached query vector. Server time is the daemon's access-log time for the request.\n\n` +
    `| page | server p50 (ms) | server p95 (ms) | server max (ms) | client wall p50 / p95 (ms) | daemon CPU per page (ms) | results per page |\n` +
    `|---|---:|---:|---:|---:|---:|---:|\n${rows.join('\n')}\n\n` +
    `Target: server time ≤ 100 ms (and daemon CPU ≤ 100 ms) per page. The daemon's CPU per page (everything it did: HTTP, session, query embedding, LanceDB, SQLite, rendering) is what ` +
    `one page costs with a core to itself; server times above it are time spent waiting for a core. With the load ` +
    `average above the core count the tail (p95, max) measures the other jobs as much as the page.\n\n` +
    `${library}\n\n${await thumbnails()}\n\n` +
    `Shipped page assets: ${assetBytes()}.\n`;
  process.stdout.write(`\n${section}\n`);
  const bm = join(REPO, 'docs/BENCHMARKS.md');
  const doc = readFileSync(bm, 'utf8');
  writeFileSync(bm, /\n## Web\n/.test(doc) ? doc.replace(/## Web\n[\s\S]*?(?=\n## |$)/, `## Web\n\n${section}`) : `${doc.trimEnd()}\n\n## Web\n\n${section}`);
}

/**
 * The Documents page read to its end by following its "Next page" links (20 pages of 50), newest first and by
 * name, three passes each; then 100 document pages (facts and the first 100 chunks of text). Keyset paging
 * should make the last page cost what the first does.
 */
async function libraryPages(d: Daemon, web: WebClient): Promise<string> {
  const rows: string[] = [];
  /** GETs each url in turn; `first` marks where a pass over the list begins (its last page is the one before the next pass). */
  const time = async (label: string, urls: () => AsyncGenerator<{ url: string; first?: boolean }>, path: RegExp) => {
    const before = serverTimes(d, path).length;
    const cpu0 = processCpuMs(d.proc.pid!);
    const starts: boolean[] = [];
    for await (const { url, first } of urls()) {
      const res = await web.get(url);
      if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
      starts.push(first === true);
    }
    const cpuMs = (processCpuMs(d.proc.pid!) - cpu0) / starts.length;
    await new Promise((r) => setTimeout(r, 300));
    const times = serverTimes(d, path).slice(before);
    const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
    const firsts = sorted(times.filter((_, i) => starts[i]));
    const lasts = sorted(times.filter((_, i) => starts.includes(true) && (i === times.length - 1 || starts[i + 1])));
    const depth = firsts.length ? `${pct(firsts, 50).toFixed(1)} / ${pct(lasts, 50).toFixed(1)}` : '';
    rows.push(`| ${label} | ${times.length} | ${pct(sorted(times), 50).toFixed(1)} | ${pct(sorted(times), 95).toFixed(1)} | ${depth} | ${cpuMs.toFixed(1)} |`);
  };
  /** The Documents list to its end, three times: each next page is the one the page just read links to. */
  async function* list(sort: string) {
    for (let pass = 0; pass < 3; pass++) {
      let url: string | undefined = `/documents?sort=${sort}`;
      for (let first = true; url; first = false) {
        yield { url, first };
        url = /<a href="([^"]+)" rel="next"/.exec(web.lastPage)?.[1]?.replaceAll('&amp;', '&');
      }
    }
  }
  await web.get('/documents'); // warm-up
  await time('Documents, newest first', () => list('-uploaded'), /^\/documents$/);
  await time('Documents, by name', () => list('name'), /^\/documents$/);
  const ids = [...web.lastPage.matchAll(/name="ids" value="([^"]+)"/g)].map((m) => m[1]!);
  async function* docs() {
    for (let i = 0; i < 100; i++) yield { url: `/documents/${ids[i % ids.length]}` };
  }
  await time('Document page with its text', docs, /^\/documents\/doc_/);
  return (
    `The library pages on the same documents (server time from the access log, the daemon's CPU per page). The ` +
    `Documents list is read to its end by following its "Next page" links, three times per order; keyset paging ` +
    `makes the last page cost what the first does:\n\n` +
    `| page | requests | server p50 (ms) | server p95 (ms) | first / last page p50 (ms) | daemon CPU per page (ms) |\n|---|---:|---:|---:|---:|---:|\n` +
    rows.join('\n')
  );
}

/**
 * First-page thumbnails of a real two-column LaTeX PDF, in this process: the first render starts the worker
 * thread and loads pdf.js; later ones of other PDFs reuse it; a cached one costs nothing. CPU is the whole
 * process's (the worker thread included).
 */
async function thumbnails(): Promise<string> {
  const pdf = readFileSync(join(REPO, 'test/fixtures/extract/latex-2col.pdf'));
  // The daemon's renderer from dist/, whose worker script is built JavaScript (this file runs from src/ under tsx).
  const { ThumbnailRenderer } = (await import(join(REPO, 'dist/pdf/thumbnail.js'))) as typeof import('../src/pdf/thumbnail.js');
  const renderer = new ThumbnailRenderer();
  const once = async (key: string) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const image = await renderer.render(key, async () => pdf);
    const c = process.cpuUsage(c0);
    if (!image) throw new Error('the thumbnail could not be drawn');
    return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000, bytes: image.length };
  };
  const cold = await once('cold');
  const warm: { ms: number; cpu: number; bytes: number }[] = [];
  for (let i = 0; i < 10; i++) warm.push(await once(`warm-${i}`));
  const cached = await once('warm-0');
  await renderer.close();
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return (
    `Thumbnails (${renderer.width} px wide WebP of the first page of test/fixtures/extract/latex-2col.pdf, ${cold.bytes.toLocaleString('en')} B): ` +
    `first render ${cold.ms.toFixed(0)} ms wall, ${cold.cpu.toFixed(0)} ms CPU (starts the worker thread, loads pdf.js); ` +
    `later renders of other files median ${mid(warm.map((w) => w.ms)).toFixed(0)} ms wall, ${mid(warm.map((w) => w.cpu)).toFixed(0)} ms CPU; ` +
    `a cached one ${cached.ms.toFixed(2)} ms.`
  );
}

interface Kind {
  name: string;
  server: number[];
  wall: number[];
  cpuMs: number;
  results: number;
}

/** What the pages load (app.css, app.js, project.js), in bytes. */
function assetBytes(): string {
  const sizes = ['app.css', 'app.js', 'project.js'].map((f) => [f, readFileSync(join(REPO, 'src/web/static', f)).length] as const);
  const total = sizes.reduce((a, [, n]) => a + n, 0);
  return `${sizes.map(([f, n]) => `${f} ${n.toLocaleString('en')} B`).join(', ')}; ${total.toLocaleString('en')} B in all (limit 50 KB, uncompressed)`;
}

await main();
