/**
 * Ingest throughput (npm run bench:ingest), through a real daemon (built binary, built-in model):
 *
 * - the daemon-API cases (bench/ingest-api.ts), each on a fresh daemon: 1,000 and 5,183 SciFact abstracts
 *   uploaded as .txt (20 per request), the 1,000 again one per request from 4 clients at once, one 20 MB text; chunks/s, the daemon's CPU-ms per chunk beside the
 *   model's own CPU-ms per passage of the same texts, peak RSS; and the 1,000 abstracts again with search
 *   p50/p95 (one client, hybrid, SciFact test queries, 100 ms between searches) while they are ingested, beside
 *   the same searches once the daemon is idle;
 * - pages/s and chunks/s, upload to ready, on a fixed set: the 206-page IRS booklet and the 352-page book of
 *   ../shared/eval/docs (see its manifest.tsv), with the per-stage split (parse / chunk / embed / write) taken
 *   from the daemon's `document.ingested` events;
 * - time-to-searchable for one generated 100-page text PDF: from the start of the upload until a keyword search
 *   through the API finds a word of its last page (target ≤ 30 s on 2 cores);
 * - the daemon's RSS right after start, once its model is loaded and it is idle, and its peak RSS (VmHWM);
 * - a first start on an empty model cache (the graph is built) beside a restart: seconds until the model is loaded,
 *   idle RSS, peak RSS.
 *
 * `--cases a,b` picks cases (start, scifact-1000, scifact-1000-single, scifact-1000-search, scifact-5183, txt-20mb, pdfs; default all); `--txt-max-seconds N`
 * stops following the 20 MB text after N s (default 3600) and reports its rate so far; `--embedder <spec>` runs the
 * daemons (and the model yardstick) with that embedder (builtin, builtin:fp32, builtin:int8). `--write` replaces the
 * "## Ingestion" section of docs/BENCHMARKS.md with the results.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { addUser, api, type Daemon, REPO, SHARED, startDaemon } from '../test/helpers/daemon.js';
import { bigText, makePdf, prose } from '../test/ingest/pipeline/fixtures.js';
import { storedChunks, uploadFiles } from '../test/ingest/pipeline/helpers.js';
import type { BertPrecision } from '../src/models/builtin/bert-graph.js';
import { closeModel, cpuMs, followOne, ingestThroughApi, modelLoaded, modelOnly, percentile, searchLatencies, storedSearchTexts, vmHwmMb, vmRssMb } from './ingest-api.js';
import { available as scifactAvailable, readCorpus, readSplit } from './scifact.js';

const SET = ['pdf/irs-1040-instructions-206p.pdf', 'pdf/freeculture-352p.pdf'];
const DOCS = join(SHARED, 'eval/docs');

interface Ingested {
  document_id: string;
  chunks: number;
  pages: number | null;
  parse_ms: number;
  chunk_ms: number;
  embed_ms: number;
  write_ms: number;
}

function events(d: Daemon): Map<string, Ingested> {
  const out = new Map<string, Ingested>();
  for (const line of d.stdout().split('\n')) {
    if (!line.includes('"event":"document.ingested"')) continue;
    const e = JSON.parse(line) as Ingested;
    out.set(e.document_id, e);
  }
  return out;
}


/**
 * Whether a keyword search through the API finds `word` in document `id`: what "searchable" means to a person. (It
 * used to read the chunks table from this process, with a scope the table's searches no longer take.)
 */
async function keywordFound(d: Daemon, token: string, id: string, word: string): Promise<boolean> {
  const res = await api(d, '/api/v1/search', { token, body: { query: word, mode: 'keyword', limit: 1 } });
  if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { results: { document: { id: string } }[] }).results.some((r) => r.document.id === id);
}

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CASES = (arg('--cases') ?? 'start,scifact-1000,scifact-1000-single,scifact-1000-search,scifact-5183,txt-20mb,pdfs').split(',');
const TXT_MAX_SECONDS = Number(arg('--txt-max-seconds') ?? 3600);
const EMBEDDER = arg('--embedder') ?? 'builtin';
/** The yardstick's precision: the daemon's (its default when `builtin`). */
const PRECISION = EMBEDDER.startsWith('builtin:') ? (EMBEDDER.slice('builtin:'.length) as BertPrecision) : undefined;
const DAEMON_ARGS = ['--max-upload-mb', '50', '--embedder', EMBEDDER];
/** Stored chunks re-embedded by the model alone for the yardstick. */
const MODEL_SAMPLE = 1000;

interface ApiRow {
  name: string;
  docs: number;
  chunks: number;
  seconds: number;
  daemonCpuMs: number;
  /** RSS right after start, the model loaded, nothing uploaded yet. */
  startRssMb: number;
  peakRssMb: number;
  model: { cpuMsPerPassage: number; wallMsPerPassage: number };
  /** The daemon's passage-model threads' CPU over the run (the model's own cost in place, same texts, same run). */
  modelThreadsMs?: number;
  note: string;
}

/** One daemon-API case on a fresh daemon: `run` ingests, then the model alone embeds a sample of what was stored. */
async function apiCase(name: string, run: (d: Daemon, token: string) => Promise<Omit<ApiRow, 'name' | 'model' | 'peakRssMb' | 'startRssMb'> & { peakRssMb?: number }>): Promise<ApiRow> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-ingest-'));
  const d = await startDaemon({ dataDir, args: DAEMON_ARGS });
  try {
    await modelLoaded(d);
    await new Promise((r) => setTimeout(r, 2000)); // idle: start-up work (index prewarm) settles
    const startRssMb = vmRssMb(d.proc.pid!);
    const user = await addUser(d);
    await uploadFiles(d, user.apiKey, [{ name: 'warm.txt', bytes: Buffer.from(prose('warm', 20)) }], { query: '?wait=true' });
    const r = await run(d, user.apiKey);
    const peakRssMb = vmHwmMb(d.proc.pid!);
    await d.stop('SIGKILL'); // a big document may still be running; the numbers are taken
    const model = await modelOnly(await storedSearchTexts(dataDir, MODEL_SAMPLE), 64, PRECISION);
    const row = { name, ...r, startRssMb, peakRssMb, model };
    process.stderr.write(`${JSON.stringify(row)}\n`);
    return row;
  } finally {
    if (d.proc.exitCode === null && d.proc.signalCode === null) await d.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `single`: one abstract per request from 4 clients at once, the way many small clients upload; else 20 per request. */
async function scifact(n: number, withSearch: boolean, single = false): Promise<ApiRow> {
  const docs = readCorpus().slice(0, n);
  const files = docs.map((x) => ({ name: `${x.id}.txt`, bytes: Buffer.from(`# ${x.title}\n\n${x.text}\n`) }));
  // Test and train queries (1,109): the ingest's searches stay new to the query-vector cache.
  const queries = withSearch ? [...readSplit('test'), ...readSplit('train')].map((q) => q.text) : [];
  const how = single ? ', one per request, 4 clients' : '';
  return apiCase(`${n} SciFact abstracts (.txt)${how}${withSearch ? ', one client searching' : ''}`, async (d, token) => {
    const r = await ingestThroughApi(d, token, files, { queries, ...(single ? { perRequest: 1, clients: 4 } : {}), onTick: (open, total) => process.stderr.write(`\r  ${open} of ${total} not ready yet   `) });
    process.stderr.write('\n');
    // Queries the ingest run did not use yet, so the query-vector cache does not flatter the idle figures.
    const idle = withSearch ? await searchLatencies(d, token, queries.slice(r.searchMs.length % queries.length).concat(queries), 200) : [];
    const p = (xs: number[]) => `${percentile(xs, 50).toFixed(0)}/${percentile(xs, 95).toFixed(0)} ms`;
    const search = withSearch ? `search p50/p95 while ingesting ${p(r.searchMs)} (${r.searchMs.length} searches), idle after ${p(idle)}` : '';
    const per = (ms: number) => (ms / r.chunks).toFixed(1);
    const split = `CPU-ms/chunk: model threads ${per(r.cpuSplit.model)}, main thread ${per(r.cpuSplit.main)}, LanceDB ${per(r.cpuSplit.lancedb)}, other ${per(r.cpuSplit.other)}`;
    return { docs: r.documents, chunks: r.chunks, seconds: r.seconds, daemonCpuMs: r.daemonCpuMs, modelThreadsMs: r.cpuSplit.model, note: [r.failed ? `${r.failed} failed` : '', search, split].filter(Boolean).join('; ') };
  });
}

async function bigTxt(mb: number): Promise<ApiRow> {
  return apiCase(`one ${mb} MB .txt`, async (d, token) => {
    const r = await followOne(d, token, { name: 'big.txt', bytes: bigText(mb) }, TXT_MAX_SECONDS);
    // Unfinished: the chunks written so far are counted from the table (the document's count is set at ready).
    const chunks = r.status === 'ready' ? r.chunks : (await storedChunks(d.dataDir, r.id)).count;
    const note = `${r.status === 'ready' ? 'ready' : `stopped at ${(r.progress * 100).toFixed(0)} %`}; progress ${r.monotonic ? 'monotonic' : 'NOT monotonic'}, moved ${r.moves} times`;
    return { docs: 1, chunks, seconds: r.seconds, daemonCpuMs: r.daemonCpuMs, note };
  });
}

/** A first start on an empty model cache, then a restart on the same data: what each holds once idle. */
async function starts(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-start-'));
  const out: string[] = [];
  try {
    for (const run of ['first start (graph built)', 'restart']) {
      const t0 = performance.now();
      const d = await startDaemon({ dataDir, args: [...DAEMON_ARGS, '--model-cache-dir', join(dataDir, 'models')] });
      await modelLoaded(d);
      const seconds = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 2000)); // idle: start-up work settles
      out.push(`${run}: model loaded in ${seconds.toFixed(1)} s, idle RSS ${vmRssMb(d.proc.pid!)} MiB, peak ${vmHwmMb(d.proc.pid!)} MiB`);
      await d.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.stderr.write(`${out.join('\n')}\n`);
  return `Start (\`--cases start\`): ${out.join('; ')}.`;
}

function apiTable(rows: ApiRow[]): string[] {
  return [
    '| case | docs | chunks | seconds | chunks/s | daemon CPU-ms/chunk | model CPU-ms/passage | CPU ratio | in-place ratio | model-bound s | time ratio | RSS after start MiB | peak RSS MiB | notes |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const perChunk = r.daemonCpuMs / r.chunks;
      const bound = (r.chunks * r.model.wallMsPerPassage) / 1000;
      const inPlace = r.modelThreadsMs ? `${(r.daemonCpuMs / r.modelThreadsMs).toFixed(2)}×` : '–';
      return (
        `| ${r.name} | ${r.docs} | ${r.chunks} | ${r.seconds.toFixed(0)} | ${(r.chunks / r.seconds).toFixed(1)} | ${perChunk.toFixed(1)} | ` +
        `${r.model.cpuMsPerPassage.toFixed(1)} | ${(perChunk / r.model.cpuMsPerPassage).toFixed(2)}× | ${inPlace} | ${bound.toFixed(0)} | ${(r.seconds / bound).toFixed(2)}× | ${r.startRssMb} | ${r.peakRssMb} | ${r.note} |`
      );
    }),
  ];
}

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  const load0 = loadavg()[0]!;
  const apiRows: ApiRow[] = [];
  const startLine = CASES.includes('start') ? await starts() : undefined;
  if (scifactAvailable()) {
    if (CASES.includes('scifact-1000')) apiRows.push(await scifact(1000, false));
    if (CASES.includes('scifact-1000-single')) apiRows.push(await scifact(1000, false, true));
    // Searching costs the daemon CPU too: the same ingest again with one client searching, for the latencies.
    if (CASES.includes('scifact-1000-search')) apiRows.push(await scifact(1000, true));
    if (CASES.includes('scifact-5183')) apiRows.push(await scifact(5183, false));
  }
  if (CASES.includes('txt-20mb')) apiRows.push(await bigTxt(20));
  const pdfSection = CASES.includes('pdfs') ? await pdfCases() : [];
  const section = [
    '## Ingestion',
    '',
    `\`npm run bench:ingest\` (bench/ingest.ts), ${new Date().toISOString().slice(0, 10)}: a real daemon with the built-in model (\`--embedder ${EMBEDDER}\`), through its API.`,
    `Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), shared: load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`,
    '',
    ...(apiRows.length
      ? [
          'Daemon-API cases, each on a fresh daemon. CPU ratio = the daemon\'s CPU time per chunk (all threads, from /proc) over the',
          "model's own CPU time per passage, measured right after on a sample of the same stored texts; in-place ratio = the daemon's CPU",
          "over its passage-model threads' in the same run (the yardstick moves with the machine's speed between runs, this does not); model-bound s = chunks ×",
          "the model's own wall time per passage; time ratio = seconds over that (sensitive to the machine's load, the CPU ratio is not).",
          '',
          ...apiTable(apiRows),
          '',
        ]
      : []),
    ...(startLine ? [startLine, ''] : []),
    ...pdfSection,
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (write) {
    const path = join(REPO, 'docs/BENCHMARKS.md');
    const doc = readFileSync(path, 'utf8');
    const start = doc.indexOf('## Ingestion');
    const end = doc.indexOf('\n## ', start + 1);
    writeFileSync(path, doc.slice(0, start) + section + (end >= 0 ? doc.slice(end + 1) : ''));
  }
}

/** The fixed PDF set and time-to-searchable, one document at a time on one daemon. */
async function pdfCases(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-ingest-'));
  const d = await startDaemon({ dataDir, args: DAEMON_ARGS });
  const rows: string[] = [];
  try {
    const user = await addUser(d);
    // Warm the model so the first document does not pay for loading it.
    await uploadFiles(d, user.apiKey, [{ name: 'warm.txt', bytes: Buffer.from(prose('warm', 20)) }], { query: '?wait=true' });

    if (existsSync(DOCS)) {
      let pages = 0;
      let chunks = 0;
      let seconds = 0;
      for (const file of SET) {
        const bytes = readFileSync(join(DOCS, file));
        const cpu0 = cpuMs(d.proc.pid!);
        const t0 = performance.now();
        const res = await uploadFiles(d, user.apiKey, [{ name: file.split('/').pop()!, bytes }], { query: '?wait=true&wait_timeout=600' });
        const s = (performance.now() - t0) / 1000;
        const cpu = cpuMs(d.proc.pid!) - cpu0;
        const doc = res.body.documents[0];
        const e = events(d).get(doc.id);
        pages += doc.pages ?? 0;
        chunks += doc.chunk_count;
        seconds += s;
        rows.push(
          `| ${file} | ${doc.status} | ${doc.pages} | ${doc.chunk_count} | ${s.toFixed(1)} | ${(doc.pages / s).toFixed(2)} | ${(doc.chunk_count / s).toFixed(1)} | ${(cpu / doc.chunk_count).toFixed(1)} | ` +
            (e ? `${(e.parse_ms / 1000).toFixed(1)} / ${(e.chunk_ms / 1000).toFixed(1)} / ${(e.embed_ms / 1000).toFixed(1)} / ${(e.write_ms / 1000).toFixed(1)}` : '–') +
            ' |',
        );
        process.stderr.write(`${rows.at(-1)}\n`);
      }
      rows.push(`| **total** | | ${pages} | ${chunks} | ${seconds.toFixed(1)} | ${(pages / seconds).toFixed(2)} | ${(chunks / seconds).toFixed(1)} | | |`);
    } else {
      rows.push(`| (skipped: ${DOCS} is absent) | | | | | | | | |`);
    }

    // Time-to-searchable: a generated 100-page text PDF, ~300 words a page; the probe word is on the last page.
    const pagesText = Array.from({ length: 100 }, (_, p) => {
      const text = `${p === 99 ? 'Zanzibarquux closes the book. ' : ''}${prose(`tts-page-${p}`, 16)}`;
      return text.match(/.{1,95}(\s|$)/g)!.map((l) => l.trim());
    });
    const pdf = makePdf(pagesText);
    const t0 = performance.now();
    const up = await uploadFiles(d, user.apiKey, [{ name: 'hundred-pages.pdf', bytes: pdf }]);
    const id = up.body.documents[0].id as string;
    while (!(await keywordFound(d, user.apiKey, id, 'Zanzibarquux'))) await new Promise((r) => setTimeout(r, 200));
    const tts = (performance.now() - t0) / 1000;
    // The event is logged right after the document turns ready; give the log line a moment to arrive.
    for (let i = 0; i < 50 && !events(d).has(id); i++) await new Promise((r) => setTimeout(r, 100));
    const e = events(d).get(id);
    const ttsLine =
      `Time-to-searchable, generated 100-page text PDF (${(pdf.length / 1024).toFixed(0)} KiB, ${e?.chunks ?? '?'} chunks): **${tts.toFixed(1)} s** ` +
      `(target ≤ 30 s; parse ${((e?.parse_ms ?? 0) / 1000).toFixed(1)} s, chunk ${((e?.chunk_ms ?? 0) / 1000).toFixed(1)} s, ` +
      `embed ${((e?.embed_ms ?? 0) / 1000).toFixed(1)} s, write ${((e?.write_ms ?? 0) / 1000).toFixed(1)} s).`;
    process.stderr.write(`${ttsLine}\n`);

    const peak = vmHwmMb(d.proc.pid!);
    await d.stop();
    const model = await modelOnly(await storedSearchTexts(dataDir, MODEL_SAMPLE), 64, PRECISION);
    return [
      `Big PDFs, one at a time on one daemon, upload → \`?wait=true\` → ready; the model alone takes ${model.cpuMsPerPassage.toFixed(1)} CPU-ms`,
      `(${model.wallMsPerPassage.toFixed(1)} ms wall) per passage on a sample of the stored chunks.`,
      '',
      '| file | status | pages | chunks | seconds | pages/s | chunks/s | daemon CPU-ms/chunk | parse / chunk / embed / write (s) |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      ttsLine,
      '',
      `Daemon peak RSS (VmHWM) over the PDF run: ${peak} MiB.`,
      '',
    ];
  } finally {
    await d.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main().finally(closeModel);
