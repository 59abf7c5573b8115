/**
 * OCR quality and speed, part 3 of `npm run bench:extract` (runs alone too: `npm run build && node --import tsx
 * bench/extract-ocr.ts [--configs a,b] [--api auto,tesseract.js] [--json file]`).
 *
 * Image-only PDFs of known text (test/fixtures/ocr, made by its make-fixtures.sh: a groff A5 page set, Ghostscript
 * image copies of the generated pdfLaTeX 2-column and groff PDFs of test/fixtures/extract, and a dense 20-page A4
 * scan, 1-bit CCITT at 300 dpi) go the daemon's way, from dist/: the parse worker finds the pages without text,
 * the OCR stage makes their images and reads them with Tesseract. Each engine and trained-data model the product
 * can use is measured (see CONFIGS); the text the chunker would get is scored against the truth:
 *
 * - character accuracy, 1 − CER (Levenshtein distance over code points / truth length, whitespace runs as one
 *   space, page by page where the truth has pages; page furniture such as running heads and page numbers is in
 *   the images but not in the truth, so it counts against accuracy);
 * - word recall, precision and bigram order as in part 1 (bench/extract-score.ts);
 * - pages/s (wall clock, every core) and CPU seconds per page: this process's threads plus its child processes
 *   (native Tesseract), with the machine's load;
 * - for native Tesseract, its floor: the tesseract program alone on the dense scan's page images, one after
 *   another, against the same pages through the engine.
 *
 * Then the dense scan through the API of a real daemon (`--api`, one run per `--ocr` mode): upload → ready
 * (pages/s, the daemon's CPU seconds a page, its children included), and each page's marker sentence searched
 * for: found when a result holds the sentence with `page_start ≤ page ≤ page_end`; and search latency before and
 * while a second copy of the scan is read.
 *
 * `--configs` picks engine/model rows by id (native-fast, native-best_int, js-best_int, js-4.0.0, js-fast; all by
 * default); `--api ''` skips the daemon runs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { characterAccuracy, truthPages } from '../test/helpers/char-accuracy.js';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../test/helpers/daemon.js';
import { uploadFiles } from '../test/ingest/pipeline/helpers.js';
import { percentile } from './ingest-api.js';
import { add, bigramOrder, precision, recall, score, type Score, ZERO } from './extract-score.js';

type ExtractModule = typeof import('../src/ingest/extract.js');
type EngineModule = typeof import('../src/ingest/ocr/engine.js');
type LanguagesModule = typeof import('../src/ingest/ocr/languages.js');
type NativeModule = typeof import('../src/ingest/ocr/native.js');
type RenderModule = typeof import('../src/pdf/page-image.js');
type StageModule = typeof import('../src/ingest/ocr-stage.js');

const REPO = resolve(import.meta.dirname, '..');
const FIXTURES = join(REPO, 'test/fixtures/ocr');
const DIST = join(REPO, 'dist');
const ENG_PACKAGE = join(REPO, 'node_modules/@tesseract.js-data/eng');
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** Each image-only PDF and the text it shows (pages separated by form feeds where the truth has pages). */
export const OCR_SET = [
  { file: 'scan-300dpi.pdf', truth: join(FIXTURES, 'scan-300dpi.truth.txt') },
  { file: 'extract-latex-2col.image.pdf', truth: join(REPO, 'test/fixtures/extract/truth.txt') },
  { file: 'extract-groff-ps2pdf.image.pdf', truth: join(REPO, 'test/fixtures/extract/truth.txt') },
  { file: 'scan-a4-dense-20p.pdf', truth: join(FIXTURES, 'scan-a4-dense-20p.truth.txt'), paged: true },
];
const DENSE = 'scan-a4-dense-20p.pdf';
/** Stands for the system Tesseract's own eng data in CONFIGS. */
const SYSTEM = 'system';

/**
 * Engine × trained data. `languages` is what `--ocr-languages` would be: a package code, or a folder (native
 * Tesseract gets a folder's .gz files unpacked). Debian's tesseract-ocr-eng is tessdata_fast; the npm package's
 * `4.0.0` holds the same LSTM network as `4.0.0_best_int` plus the legacy engine's data (unused in LSTM mode).
 */
const CONFIGS = [
  { id: 'native-fast', name: 'native, Debian tessdata_fast', engine: 'native', languages: 'eng', needs: 'system' },
  { id: 'native-best_int', name: 'native, npm 4.0.0_best_int', engine: 'native', languages: join(ENG_PACKAGE, '4.0.0_best_int'), needs: 'native' },
  { id: 'js-best_int', name: 'tesseract.js, npm 4.0.0_best_int (fallback default)', engine: 'tesseract.js', languages: 'eng' },
  { id: 'js-4.0.0', name: 'tesseract.js, npm 4.0.0', engine: 'tesseract.js', languages: join(ENG_PACKAGE, '4.0.0') },
  { id: 'js-fast', name: 'tesseract.js, Debian tessdata_fast', engine: 'tesseract.js', languages: SYSTEM, needs: 'system' },
] as const;

export interface OcrBenchRow {
  config: string;
  file: string;
  pages: number;
  ocrPages: number;
  truthChars: number;
  charErrors: number;
  accuracy: number;
  words: Score;
  confidence: string;
  wallS: number;
  /** This process's threads and its child processes. */
  cpuS: number;
  /** The child processes alone (native Tesseract). */
  tesseractCpuS: number;
  error?: string;
}


/** Levenshtein of whole texts is quadratic: a paged truth is scored page by page. */
function accuracyOf(pages: { page: number; text: string }[], truth: string, paged: boolean): { errors: number; length: number } {
  if (!paged) return characterAccuracy(pages.map((p) => p.text).join('\n\n'), truth.replaceAll('\f', ''));
  const want = truthPages(truth);
  let errors = 0;
  let length = 0;
  want.forEach((t, i) => {
    const got = characterAccuracy(pages.filter((p) => p.page === i + 1).map((p) => p.text).join('\n\n'), t);
    errors += got.errors;
    length += got.length;
  });
  return { errors, length };
}

/** Native Tesseract alone (no engine, threads or daemon) on one PDF's page images, one page after another. */
export interface OcrFloor {
  config: string;
  pages: number;
  cpuS: number;
}

export async function runOcrBench(only?: string[]): Promise<{ rows: OcrBenchRow[]; floors: OcrFloor[] }> {
  const { createExtractor } = (await import(join(DIST, 'ingest/extract.js'))) as ExtractModule;
  const { OcrEngine } = (await import(join(DIST, 'ingest/ocr/engine.js'))) as EngineModule;
  const { resolveOcrLanguages } = (await import(join(DIST, 'ingest/ocr/languages.js'))) as LanguagesModule;
  const { probeTesseract, recognizeNative } = (await import(join(DIST, 'ingest/ocr/native.js'))) as NativeModule;
  const { openPdf, pageImage } = (await import(join(DIST, 'pdf/page-image.js'))) as RenderModule;
  const { stageForNative } = (await import(join(DIST, 'ingest/ocr/languages.js'))) as LanguagesModule;
  const { applyOcr } = (await import(join(DIST, 'ingest/ocr-stage.js'))) as StageModule;
  const native = await probeTesseract('tesseract').catch(() => undefined);
  const extractor = createExtractor({});
  const rows: OcrBenchRow[] = [];
  const floors: OcrFloor[] = [];
  try {
    for (const config of CONFIGS) {
      if (only && !only.includes(config.id)) continue;
      const needs = 'needs' in config ? config.needs : undefined;
      const lacking = needs === 'system' && !native?.system?.languages.has('eng') ? 'tesseract-ocr-eng' : needs && !native ? 'tesseract-ocr' : undefined;
      if (lacking) {
        console.error(`skipped: ${config.name} (needs ${lacking})`);
        continue;
      }
      // The system's eng alone (its folder may hold other languages).
      const system = needs === 'system' ? mkdtempSync(join(tmpdir(), 'bench-tessdata-')) : undefined;
      if (system) symlinkSync(join(native!.system!.dir, 'eng.traineddata'), join(system, 'eng.traineddata'));
      const languages = config.languages === SYSTEM ? system! : config.languages;
      const engine = new OcrEngine({ languages: resolveOcrLanguages(languages), engine: config.engine });
      try {
        // Loads the engine (probe, data, threads) first, so the files' times are recognition only.
        await engine.recognize(readFileSync(join(FIXTURES, 'scan-300dpi.pdf')), [1, 2]);
        for (const { file, truth, paged } of OCR_SET) {
          const bytes = readFileSync(join(FIXTURES, file));
          const reference = readFileSync(truth, 'utf8');
          const parsed = await extractor.extract(bytes, 'application/pdf', { filename: file });
          const cpu = processCpuSeconds(process.pid);
          const started = performance.now();
          const run = await engine.recognize(bytes, parsed.ocrPages ?? []);
          const wallS = (performance.now() - started) / 1000;
          const after = processCpuSeconds(process.pid);
          const tesseractCpuS = after.children - cpu.children;
          const cpuS = after.own - cpu.own + tesseractCpuS;
          // The stage's own text (paragraphs joined as the chunker gets them), from the pages just read.
          const out = await applyOcr({ languages: engine.languages, languagesFor: async () => ({ missing: [] }), recognize: async () => run }, parsed, bytes, 'application/pdf', async () => {});
          const pages = [...new Set(out.blocks.map((b) => b.page ?? 0))].map((page) => ({ page, text: out.blocks.filter((b) => b.page === page).map((b) => b.text).join('\n\n') }));
          const chars = accuracyOf(pages, reference, paged ?? false);
          rows.push({
            config: `${config.name}${config.engine === 'native' ? ` (${run.engine})` : ''}`,
            file,
            pages: parsed.pages ?? 0,
            ocrPages: parsed.ocrPages?.length ?? 0,
            truthChars: chars.length,
            charErrors: chars.errors,
            accuracy: chars.length ? 1 - chars.errors / chars.length : 1,
            words: score(pages.map((p) => p.text).join('\n\n'), reference.replaceAll('\f', '')),
            confidence: /confidence (\d+)/.exec(out.warnings.find((w) => w.startsWith('OCR: ')) ?? '')?.[1] ?? '–',
            wallS,
            cpuS,
            tesseractCpuS,
            ...(run.failed.length ? { error: run.failed.map((f) => `page ${f.page}: ${f.reason}`).join('; ') } : {}),
          });
        }
        if (config.engine === 'native' && native) {
          // The floor: the same page images straight into the tesseract program, one after another.
          const doc = await openPdf(new Uint8Array(readFileSync(join(FIXTURES, DENSE))));
          const data = stageForNative(resolveOcrLanguages(languages), native.system);
          try {
            const images = [];
            for (let p = 1; p <= doc.numPages; p++) images.push(await pageImage(doc, p));
            const before = processCpuSeconds(process.pid).children;
            for (const image of images) await recognizeNative(native, image.pnm, { tessdataDir: data.dir, languages: 'eng', dpi: image.dpi, timeoutMs: 600_000 });
            floors.push({ config: config.name, pages: images.length, cpuS: processCpuSeconds(process.pid).children - before });
          } finally {
            data.dispose();
            await doc.destroy();
          }
        }
      } finally {
        await engine.close();
        if (system) rmSync(system, { recursive: true, force: true });
      }
    }
  } finally {
    await extractor.close();
  }
  return { rows, floors };
}

export function printOcrBench({ rows, floors }: { rows: OcrBenchRow[]; floors: OcrFloor[] }): void {
  const f3 = (n: number) => n.toFixed(3);
  console.log(`\n## OCR (image-only PDFs, eng, ${cpus().length} OCR threads: one per core)\n`);
  console.log('| engine, model | file | pages (OCR) | chars | char accuracy | word recall | precision | bigram order | confidence | pages/s | CPU s/page | of which tesseract processes | note |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const config of [...new Set(rows.map((r) => r.config))]) {
    let words = ZERO;
    let chars = 0;
    let errors = 0;
    let pages = 0;
    let wall = 0;
    let cpu = 0;
    let tesseract = 0;
    const mine = rows.filter((r) => r.config === config);
    for (const r of mine) {
      words = add(words, r.words);
      chars += r.truthChars;
      errors += r.charErrors;
      pages += r.ocrPages;
      wall += r.wallS;
      cpu += r.cpuS;
      tesseract += r.tesseractCpuS;
      console.log(
        `| ${config} | ${r.file} | ${r.pages} (${r.ocrPages}) | ${r.truthChars} | ${f3(r.accuracy)} | ${f3(recall(r.words))} | ${f3(precision(r.words))} | ${f3(bigramOrder(r.words))} | ${r.confidence} | ${(r.ocrPages / r.wallS).toFixed(2)} | ${(r.cpuS / Math.max(1, r.ocrPages)).toFixed(2)} | ${(r.tesseractCpuS / Math.max(1, r.ocrPages)).toFixed(2)} | ${r.error ?? ''} |`,
      );
    }
    console.log(
      `| ${config} | **pooled (${mine.length} files)** | ${pages} | ${chars} | **${f3(chars ? 1 - errors / chars : 1)}** | ${f3(recall(words))} | ${f3(precision(words))} | ${f3(bigramOrder(words))} | | ${(pages / wall).toFixed(2)} | ${(cpu / Math.max(1, pages)).toFixed(2)} | ${(tesseract / Math.max(1, pages)).toFixed(2)} | |`,
    );
  }
  for (const f of floors) {
    const engine = rows.find((r) => r.config.startsWith(f.config) && r.file === DENSE);
    const through = engine ? engine.cpuS / engine.ocrPages : NaN;
    console.log(
      `- floor, ${f.config}: the tesseract program alone on the ${f.pages} page images of ${DENSE}, one after another: ${(f.cpuS / f.pages).toFixed(2)} CPU s/page; through the engine ${through.toFixed(2)} (${(((through * f.pages) / f.cpuS - 1) * 100).toFixed(0)} % above)`,
    );
  }
}

export interface ApiRow {
  mode: string;
  engine: string;
  pages: number;
  seconds: number;
  cpuS: number;
  /** The daemon's child processes (native Tesseract). */
  tesseractCpuS: number;
  /** The daemon's CPU for the same text uploaded as a TXT file (no OCR). */
  textCpuS: number;
  found: number;
  missed: string[];
  /** Search latency p50 / p95 before the upload, and while the scan was read (one client, 100 ms apart). */
  searchIdleMs: [number, number];
  searchBusyMs: [number, number];
  searches: number;
  /** Upload → ready of the second copy, read while the searches ran. */
  searchedSeconds: number;
  status: string;
}

/** The fields of /proc/PID/stat after the command name: [0] state, [1] ppid, [11] utime … [14] cstime. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // it ended meanwhile
  }
}

const ticks = (f: string[], a: number, b: number): number => ((Number(f[a]) + Number(f[b])) * TICK_MS) / 1000;

/**
 * CPU seconds of a process: its threads (`own`), and its child processes (`children`, native Tesseract): those
 * that ended and were waited for, and those alive now with their own descendants. Native Tesseract sessions live
 * across pages and documents, so the children that ended alone would miss their work; a session alive at the
 * first reading and ended at the second is counted by both, so the difference of two readings is right.
 */
export function processCpuSeconds(pid: number): { own: number; children: number } {
  const self = statFields(pid);
  if (!self) throw new Error(`process ${pid} is gone`);
  const byParent = new Map<number, { pid: number; f: string[] }[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (!f) continue;
    const parent = Number(f[1]);
    byParent.set(parent, [...(byParent.get(parent) ?? []), { pid: Number(entry), f }]);
  }
  const live = (parent: number): number =>
    (byParent.get(parent) ?? []).reduce((sum, c) => sum + ticks(c.f, 11, 12) + ticks(c.f, 13, 14) + live(c.pid), 0);
  return { own: ticks(self, 11, 12), children: ticks(self, 13, 14) + live(pid) };
}

type Doc = { id: string; status: string; pages: number; error: string | null; warnings: string[] };

/** Uploads the dense scan as `token`, polls until it settles (calling `meanwhile` between polls); the time taken (to 0.5 s alone). */
async function ingestScan(d: Daemon, token: string, meanwhile?: () => Promise<void>): Promise<{ doc: Doc; seconds: number }> {
  const t0 = performance.now();
  const res = await uploadFiles(d, token, [{ name: DENSE, bytes: readFileSync(join(FIXTURES, DENSE)) }]);
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  const id = res.body.documents[0].id as string;
  for (;;) {
    const doc = (await api(d, `/api/v1/documents/${id}`, { token })).body as Doc;
    if (doc.status === 'ready' || doc.status === 'failed') return { doc, seconds: (performance.now() - t0) / 1000 };
    await meanwhile?.();
    // Alone, a poll every 500 ms: the daemon's CPU a page would otherwise grow with the run's length (on a loaded
    // machine, 10 polls a second over minutes); beside the searches, 100 ms as they are spaced.
    await new Promise((r) => setTimeout(r, meanwhile ? 100 : 500));
  }
}

/**
 * The dense scan uploaded to a real daemon (`--ocr <mode>`): upload → ready with nothing else running, then every
 * page's marker searched for; then, as a second user, the same scan again while one client searches a text
 * document of theirs back to back (100 ms apart), against the same searches before the upload.
 */
export async function runApiBench(mode: string): Promise<ApiRow> {
  const d = await startDaemon({ args: ['--ocr', mode], timeoutMs: 120_000 });
  try {
    const pid = d.proc.pid!;
    // The same text as a TXT file first: what the pipeline spends on it without OCR (parse, chunk, embed, write).
    const carol = await addUser(d);
    const truthText = readFileSync(join(FIXTURES, DENSE.replace('.pdf', '.truth.txt')), 'utf8').replaceAll('\f', '');
    const textCpu0 = processCpuSeconds(pid);
    const plain = await uploadFiles(d, carol.apiKey, [{ name: 'dense.txt', bytes: Buffer.from(truthText) }], { query: '?wait=true' });
    if (plain.status !== 200) throw new Error(`text upload answered ${plain.status}`);
    const textCpu = processCpuSeconds(pid).own - textCpu0.own;
    const alice = await addUser(d);
    const cpu0 = processCpuSeconds(pid);
    const { doc, seconds } = await ingestScan(d, alice.apiKey);
    const cpu1 = processCpuSeconds(pid);
    const engine = /"event":"ocr\.loaded"[^\n]*"engine":"([^"]+)"/.exec(d.stdout())?.[1] ?? '?';
    const normal = (text: string) => text.replace(/\s+/g, ' ').trim();
    const truth = truthPages(readFileSync(join(FIXTURES, DENSE.replace('.pdf', '.truth.txt')), 'utf8'));
    const missed: string[] = [];
    for (const [i, page] of truth.entries()) {
      const marker = /^Marker \w+: .*$/m.exec(page)![0];
      const found = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: marker, limit: 5 } });
      const hit = (found.body.results ?? []).find((r: { text: string }) => normal(r.text).includes(normal(marker)));
      if (!hit || !(hit.page_start <= i + 1 && hit.page_end >= i + 1)) missed.push(`page ${i + 1}${hit ? ` (found on ${hit.page_start}–${hit.page_end})` : ''}`);
    }

    const bob = await addUser(d);
    const text = await uploadFiles(d, bob.apiKey, [{ name: 'gpl.txt', bytes: readFileSync(join(REPO, 'test/fixtures/extract/truth.txt')) }], { query: '?wait=true' });
    if (text.status !== 200) throw new Error(`text upload answered ${text.status}`);
    const search = async (into: number[]): Promise<void> => {
      const s = performance.now();
      const r = await api(d, '/api/v1/search', { token: bob.apiKey, body: { query: 'who may convey copies of the source code', limit: 10 } });
      if (r.status !== 200) throw new Error(`search answered ${r.status}`);
      into.push(performance.now() - s);
    };
    const idleMs: number[] = [];
    for (let i = 0; i < 30; i++) await search(idleMs);
    const busyMs: number[] = [];
    const searched = await ingestScan(d, bob.apiKey, () => search(busyMs));
    return {
      mode,
      engine,
      pages: doc.pages,
      seconds,
      cpuS: cpu1.own - cpu0.own + cpu1.children - cpu0.children,
      tesseractCpuS: cpu1.children - cpu0.children,
      textCpuS: textCpu,
      found: truth.length - missed.length,
      missed,
      searchIdleMs: [percentile(idleMs, 50), percentile(idleMs, 95)],
      searchBusyMs: [percentile(busyMs, 50), percentile(busyMs, 95)],
      searches: busyMs.length,
      searchedSeconds: searched.seconds,
      status: doc.status === 'ready' ? `ready${doc.warnings.length ? `: ${doc.warnings.join('; ')}` : ''}` : `failed: ${doc.error}`,
    };
  } finally {
    await d.stop();
    removeDir(d.dataDir);
  }
}

export function printApiBench(rows: ApiRow[]): void {
  console.log(`\n## OCR through the API: ${DENSE} (20 dense A4 pages, 1-bit, 300 dpi), upload → ready\n`);
  console.log('| --ocr | engine | pages | seconds | pages/s | daemon CPU s/page (tesseract processes; the same text as TXT) | markers found on their page | search p50/p95 ms: idle → during OCR (pages/s meanwhile) | document |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.mode} | ${r.engine} | ${r.pages} | ${r.seconds.toFixed(1)} | ${(r.pages / r.seconds).toFixed(2)} | ${(r.cpuS / Math.max(1, r.pages)).toFixed(2)} (${(r.tesseractCpuS / Math.max(1, r.pages)).toFixed(2)}; ${(r.textCpuS / Math.max(1, r.pages)).toFixed(2)}) | ${r.found}/${r.found + r.missed.length}${r.missed.length ? ` (missed: ${r.missed.join(', ')})` : ''} | ${r.searchIdleMs.map((v) => v.toFixed(0)).join('/')} → ${r.searchBusyMs.map((v) => v.toFixed(0)).join('/')} (${r.searches} searches; ${(r.pages / r.searchedSeconds).toFixed(2)} pages/s) | ${r.status} |`,
    );
  }
}

const list = (v: string | undefined): string[] | undefined => (v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean));

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { json: { type: 'string' }, configs: { type: 'string' }, api: { type: 'string', default: 'auto,tesseract.js' } } });
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const rows = await runOcrBench(list(values.configs));
  printOcrBench(rows);
  const apiRows: ApiRow[] = [];
  for (const mode of list(values.api) ?? []) apiRows.push(await runApiBench(mode));
  if (apiRows.length) printApiBench(apiRows);
  console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (values.json) writeFileSync(values.json, JSON.stringify({ rows, api: apiRows }, null, 2));
}
