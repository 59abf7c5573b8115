/**
 * OCR quality and speed, part 3 of `npm run bench:extract` (runs alone too: `npm run build && node --import tsx
 * bench/extract-ocr.ts [--json file]`).
 *
 * Image-only PDFs of known text (test/fixtures/ocr, made by its make-fixtures.sh: a groff page set, and
 * Ghostscript image copies of the generated pdfLaTeX 2-column and groff PDFs of test/fixtures/extract) go the
 * daemon's way, from dist/: the parse worker finds the pages without text, the OCR stage renders them at
 * 300 dpi and reads them with Tesseract (eng, LSTM). The text the chunker would get is scored against the truth:
 *
 * - character accuracy, 1 − CER (Levenshtein distance over code points / truth length, whitespace runs as one
 *   space; page furniture such as running heads and page numbers is in the images but not in the truth, so it
 *   counts against accuracy);
 * - word recall, precision and bigram order as in part 1 (bench/extract-score.ts);
 * - pages/s (wall clock) and CPU seconds per page (every thread of this process), with the machine's load.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { characterAccuracy } from '../test/helpers/char-accuracy.js';
import { add, bigramOrder, precision, recall, score, type Score, ZERO } from './extract-score.js';

type ExtractModule = typeof import('../src/ingest/extract.js');
type EngineModule = typeof import('../src/ingest/ocr/engine.js');
type LanguagesModule = typeof import('../src/ingest/ocr/languages.js');
type StageModule = typeof import('../src/ingest/ocr-stage.js');

const REPO = resolve(import.meta.dirname, '..');
const FIXTURES = join(REPO, 'test/fixtures/ocr');

/** Each image-only PDF and the text it shows. */
export const OCR_SET = [
  { file: 'scan-300dpi.pdf', truth: join(FIXTURES, 'scan-300dpi.truth.txt') },
  { file: 'extract-latex-2col.image.pdf', truth: join(REPO, 'test/fixtures/extract/truth.txt') },
  { file: 'extract-groff-ps2pdf.image.pdf', truth: join(REPO, 'test/fixtures/extract/truth.txt') },
];

export interface OcrBenchRow {
  file: string;
  pages: number;
  ocrPages: number;
  truthChars: number;
  charErrors: number;
  accuracy: number;
  words: Score;
  confidence: string;
  wallS: number;
  cpuS: number;
  error?: string;
}

export async function runOcrBench(): Promise<OcrBenchRow[]> {
  const dist = join(REPO, 'dist');
  const { createExtractor } = (await import(join(dist, 'ingest/extract.js'))) as ExtractModule;
  const { OcrEngine } = (await import(join(dist, 'ingest/ocr/engine.js'))) as EngineModule;
  const { resolveOcrLanguages } = (await import(join(dist, 'ingest/ocr/languages.js'))) as LanguagesModule;
  const { applyOcr } = (await import(join(dist, 'ingest/ocr-stage.js'))) as StageModule;
  const extractor = createExtractor({});
  const engine = new OcrEngine({ languages: resolveOcrLanguages('eng') });
  const rows: OcrBenchRow[] = [];
  try {
    // Loads Tesseract and its model once, so the first file's time is recognition only.
    await engine.recognize(readFileSync(join(FIXTURES, 'scan-300dpi.pdf')), [1]);
    for (const { file, truth } of OCR_SET) {
      const bytes = readFileSync(join(FIXTURES, file));
      const reference = readFileSync(truth, 'utf8').replaceAll('\f', '');
      const parsed = await extractor.extract(bytes, 'application/pdf', { filename: file });
      const cpu = process.cpuUsage();
      const started = performance.now();
      const out = await applyOcr(engine, parsed, bytes, 'application/pdf', async () => {});
      const wallS = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const text = out.blocks.map((b) => b.text).join('\n\n');
      const chars = characterAccuracy(text, reference);
      const ocrWarning = out.warnings.find((w) => w.startsWith('OCR: '));
      const failed = out.warnings.filter((w) => w.startsWith('OCR failed'));
      rows.push({
        file,
        pages: parsed.pages ?? 0,
        ocrPages: parsed.ocrPages?.length ?? 0,
        truthChars: chars.length,
        charErrors: chars.errors,
        accuracy: chars.accuracy,
        words: score(text, reference),
        confidence: /confidence (\d+)/.exec(ocrWarning ?? '')?.[1] ?? '–',
        wallS,
        cpuS: (used.user + used.system) / 1e6,
        ...(failed.length ? { error: failed.join('; ') } : {}),
      });
    }
  } finally {
    await engine.close();
    await extractor.close();
  }
  return rows;
}

export function printOcrBench(rows: OcrBenchRow[]): void {
  const f3 = (n: number) => n.toFixed(3);
  console.log('\n## OCR (image-only PDFs, eng, 300 dpi)\n');
  console.log('| file | pages (OCR) | chars | char accuracy | word recall | precision | bigram order | confidence | pages/s | CPU s/page | note |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  let words = ZERO;
  let chars = 0;
  let errors = 0;
  let pages = 0;
  let wall = 0;
  let cpu = 0;
  for (const r of rows) {
    words = add(words, r.words);
    chars += r.truthChars;
    errors += r.charErrors;
    pages += r.ocrPages;
    wall += r.wallS;
    cpu += r.cpuS;
    console.log(
      `| ${r.file} | ${r.pages} (${r.ocrPages}) | ${r.truthChars} | ${f3(r.accuracy)} | ${f3(recall(r.words))} | ${f3(precision(r.words))} | ${f3(bigramOrder(r.words))} | ${r.confidence} | ${(r.ocrPages / r.wallS).toFixed(2)} | ${(r.cpuS / Math.max(1, r.ocrPages)).toFixed(1)} | ${r.error ?? ''} |`,
    );
  }
  console.log(
    `| **pooled (${rows.length} files)** | ${pages} | ${chars} | ${f3(chars ? 1 - errors / chars : 1)} | ${f3(recall(words))} | ${f3(precision(words))} | ${f3(bigramOrder(words))} | | ${(pages / wall).toFixed(2)} | ${(cpu / Math.max(1, pages)).toFixed(1)} | |`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { json: { type: 'string' } } });
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const rows = await runOcrBench();
  printOcrBench(rows);
  console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
}
