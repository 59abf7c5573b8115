/**
 * Ingest throughput (npm run bench:ingest), through a real daemon (built binary, built-in model):
 *
 * - pages/s and chunks/s, upload to ready, on a fixed set: the 206-page IRS booklet and the 352-page book of
 *   ../shared/eval/docs (see its manifest.tsv), with the per-stage split (parse / chunk / embed / write) taken
 *   from the daemon's `document.ingested` events;
 * - time-to-searchable for one generated 100-page text PDF: from the start of the upload until a keyword from
 *   its last page is found in the chunks table (target ≤ 30 s on 2 cores);
 * - the daemon's peak RSS (VmHWM).
 *
 * `--write` replaces the "## Ingestion" section of docs/BENCHMARKS.md with the results.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { addUser, type Daemon, REPO, SHARED, startDaemon } from '../test/helpers/daemon.js';
import { makePdf, prose } from '../test/ingest/pipeline/fixtures.js';
import { storedChunks, uploadFiles } from '../test/ingest/pipeline/helpers.js';

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

const vmHwmMb = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

async function keywordFound(dataDir: string, userId: string, word: string): Promise<boolean> {
  const { ChunkIndex } = await import(join(REPO, 'dist/store/lancedb/chunks.js'));
  const { VectorStore } = await import(join(REPO, 'dist/store/lancedb/connection.js'));
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const index = await ChunkIndex.open(store, { embedderId: 'builtin:all-MiniLM-L6-v2' });
    return (await index.keywordSearch({ userId, query: word, limit: 1 })).length > 0;
  } finally {
    store.close();
  }
}

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-ingest-'));
  const d = await startDaemon({ dataDir, args: ['--max-upload-mb', '50'] });
  const rows: string[] = [];
  try {
    const user = await addUser(d);
    // Warm the model so the first document does not pay for loading it; its chunks also tell the user id.
    const warm = await uploadFiles(d, user.apiKey, [{ name: 'warm.txt', bytes: Buffer.from(prose('warm', 20)) }], { query: '?wait=true' });
    const userId = (await storedChunks(dataDir, warm.body.documents[0].id)).rows[0]!.user_id;

    if (existsSync(DOCS)) {
      let pages = 0;
      let chunks = 0;
      let seconds = 0;
      for (const file of SET) {
        const bytes = readFileSync(join(DOCS, file));
        const t0 = performance.now();
        const res = await uploadFiles(d, user.apiKey, [{ name: file.split('/').pop()!, bytes }], { query: '?wait=true&wait_timeout=600' });
        const s = (performance.now() - t0) / 1000;
        const doc = res.body.documents[0];
        const e = events(d).get(doc.id);
        pages += doc.pages ?? 0;
        chunks += doc.chunk_count;
        seconds += s;
        rows.push(
          `| ${file} | ${doc.status} | ${doc.pages} | ${doc.chunk_count} | ${s.toFixed(1)} | ${(doc.pages / s).toFixed(2)} | ${(doc.chunk_count / s).toFixed(1)} | ` +
            (e ? `${(e.parse_ms / 1000).toFixed(1)} / ${(e.chunk_ms / 1000).toFixed(1)} / ${(e.embed_ms / 1000).toFixed(1)} / ${(e.write_ms / 1000).toFixed(1)}` : '–') +
            ' |',
        );
        process.stderr.write(`${rows.at(-1)}\n`);
      }
      rows.push(`| **total** | | ${pages} | ${chunks} | ${seconds.toFixed(1)} | ${(pages / seconds).toFixed(2)} | ${(chunks / seconds).toFixed(1)} | |`);
    } else {
      rows.push(`| (skipped: ${DOCS} is absent) | | | | | | | |`);
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
    while (!(await keywordFound(dataDir, userId, 'Zanzibarquux'))) await new Promise((r) => setTimeout(r, 200));
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
    const section = [
      '## Ingestion',
      '',
      `\`npm run bench:ingest\` (bench/ingest.ts), ${new Date().toISOString().slice(0, 10)}: a real daemon with the built-in model, one document at a time,`,
      `upload → \`?wait=true\` → ready. Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), load average at the end ${loadavg()[0]!.toFixed(2)}.`,
      '',
      '| file | status | pages | chunks | seconds | pages/s | chunks/s | parse / chunk / embed / write (s) |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      ttsLine,
      '',
      `Daemon peak RSS (VmHWM) over the run: ${peak} MiB.`,
      '',
    ].join('\n');
    process.stdout.write(`${section}\n`);
    if (write) {
      const path = join(REPO, 'docs/BENCHMARKS.md');
      const doc = readFileSync(path, 'utf8');
      const start = doc.indexOf('## Ingestion');
      const end = doc.indexOf('\n## ', start + 1);
      writeFileSync(path, doc.slice(0, start) + section + (end >= 0 ? doc.slice(end + 1) : ''));
    }
  } finally {
    await d.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
