/**
 * Formats, part 4 of `npm run bench:extract` (alone: `npm run build && node --import tsx bench/extract.ts --only
 * formats`): every file of test/fixtures/formats (made by pandoc, LibreOffice and ImageMagick: make.sh there)
 * through the daemon's own path in dist/ — typed by its bytes, parsed in the parse worker (legacy Office converted
 * by LibreOffice first), images read by the OCR engine (`--ocr auto`), chunked by the real chunker — and scored
 * against truth.json there:
 * - word recall (and precision) of the document's text (title, headings, blocks) against the text a reader sees;
 * - markup leaked: tags, entities, RTF control words, MIME boundaries, Markdown emphasis or links in any chunk;
 * - citations: for each sentence truth.json places, the chunk holding it cites that unit (slide, sheet and row,
 *   chapter, page), as the API's `citation` field would;
 * - OCR'd images: character accuracy (1 − CER) against the rendered line;
 * - CPU per document: this process's threads and its child processes (LibreOffice, native Tesseract).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { characterAccuracy, truthPages } from '../test/helpers/char-accuracy.js';
import { loadMiniLmTokenizer } from '../test/ingest/minilm-tokenizer.js';
import { processCpuSeconds } from './extract-ocr.js';
import { precision, recall, score } from './extract-score.js';

const REPO = resolve(import.meta.dirname, '..');
const DIST = join(REPO, 'dist');
const DIR = join(REPO, 'test/fixtures/formats');
/** The markup of every format, as test/ingest/formats/formats.test.ts looks for it. */
const MARKUP = /<\/?[a-z][^>]*>|&[a-z]+;|&#\d+;|\\[a-z]+\d*|--XYZ|\*\w|\]\(|^#+ /gim;

interface Truth {
  text: string;
  ocr?: boolean;
  cites: { holds: string; unit: string; start: number; sheet?: string }[];
}

export interface FormatRow {
  file: string;
  type: string;
  words: number;
  recall: number;
  precision: number;
  markup: number;
  cites: number;
  citesRight: number;
  /** Images: 1 − CER of the recognised text. */
  charAccuracy?: number;
  cpuMs: number;
  error?: string;
}

export async function runFormatsBench(): Promise<FormatRow[]> {
  const { createExtractor } = (await import(join(DIST, 'ingest/extract.js'))) as typeof import('../src/ingest/extract.js');
  const { sniffType, ZIP, OLE2_CFB } = (await import(join(DIST, 'ingest/sniff.js'))) as typeof import('../src/ingest/sniff.js');
  const { sniffZip } = (await import(join(DIST, 'ingest/sniff-zip.js'))) as typeof import('../src/ingest/sniff-zip.js');
  const { sniffCfb } = (await import(join(DIST, 'ingest/sniff-cfb.js'))) as typeof import('../src/ingest/sniff-cfb.js');
  const { probeLibreOffice } = (await import(join(DIST, 'ingest/office/libreoffice.js'))) as typeof import('../src/ingest/office/libreoffice.js');
  const { OcrEngine } = (await import(join(DIST, 'ingest/ocr/engine.js'))) as typeof import('../src/ingest/ocr/engine.js');
  const { resolveOcrLanguages } = (await import(join(DIST, 'ingest/ocr/languages.js'))) as typeof import('../src/ingest/ocr/languages.js');
  const { applyOcr } = (await import(join(DIST, 'ingest/ocr-stage.js'))) as typeof import('../src/ingest/ocr-stage.js');
  const { chunkDocument } = (await import(join(DIST, 'ingest/chunk.js'))) as typeof import('../src/ingest/chunk.js');
  const { citation } = (await import(join(DIST, 'search/citation.js'))) as typeof import('../src/search/citation.js');

  const truth = JSON.parse(readFileSync(join(DIR, 'truth.json'), 'utf8')) as Record<string, Truth>;
  const libreOffice = await probeLibreOffice().catch(() => undefined);
  const extractor = createExtractor(libreOffice ? { libreOffice } : {});
  const engine = new OcrEngine({ languages: resolveOcrLanguages('eng'), engine: 'auto' });
  const tokenizer = loadMiniLmTokenizer();
  const rows: FormatRow[] = [];
  try {
    for (const [file, want] of Object.entries(truth)) {
      if (file === '_') continue;
      const bytes = new Uint8Array(readFileSync(join(DIR, file)));
      const head = sniffType(bytes.subarray(0, 8192), file);
      const type = head === ZIP ? await sniffZip(Buffer.from(bytes), bytes) : head === OLE2_CFB ? await sniffCfb(bytes) : head;
      const row: FormatRow = { file, type: type ?? 'unknown', words: 0, recall: 0, precision: 0, markup: 0, cites: want.cites.length, citesRight: 0, cpuMs: 0 };
      rows.push(row);
      if (!type) {
        row.error = 'not recognised';
        continue;
      }
      const before = processCpuSeconds(process.pid);
      try {
        let doc = await extractor.extract(bytes, type, { filename: file });
        if (want.ocr) {
          doc = await applyOcr(engine, doc, bytes, type, async () => {});
        }
        const chunks = chunkDocument(doc, { tokenizer, maxTokens: 256, overlapTokens: 32, title: doc.title ?? file });
        const after = processCpuSeconds(process.pid);
        row.cpuMs = (after.own - before.own + after.children - before.children) * 1000;
        // The sheet names are not in any block: they are the rows' heading, shown and cited with them.
        const headings = [...new Set(doc.blocks.flatMap((b) => (b.kind === 'heading' ? [] : b.headings)))].filter((h) => !doc.blocks.some((b) => b.text === h));
        const text = [doc.title ?? '', ...headings, ...doc.blocks.map((b) => b.text)].join('\n');
        const s = score(text, want.text.replaceAll('\f', '\n'));
        row.words = s.refWords;
        row.recall = recall(s);
        row.precision = precision(s);
        row.markup = chunks.reduce((n, c) => n + (c.text.match(MARKUP)?.length ?? 0), 0);
        if (want.ocr) {
          const pages = truthPages(want.text);
          let errors = 0;
          let length = 0;
          pages.forEach((t, i) => {
            const got = characterAccuracy(doc.blocks.filter((b) => b.page === i + 1).map((b) => b.text).join('\n'), t);
            errors += got.errors;
            length += got.length;
          });
          row.charAccuracy = 1 - errors / length;
        }
        for (const c of want.cites) {
          const chunk = chunks.find((k) => k.text.includes(c.holds));
          const heading = chunk?.headings.join(' > ');
          const cited = chunk ? citation(type, { ...(chunk.pageStart !== undefined ? { page_start: chunk.pageStart } : {}), ...(chunk.pageEnd !== undefined ? { page_end: chunk.pageEnd } : {}), ...(heading ? { heading } : {}) }) : undefined;
          if (cited && cited.unit === c.unit && cited.start <= c.start && c.start <= cited.end && cited.sheet === c.sheet) row.citesRight++;
        }
      } catch (err) {
        row.error = (err as Error).message;
      }
    }
  } finally {
    await extractor.close();
    await engine.close();
  }
  return rows;
}

export function printFormatsBench(rows: FormatRow[]): void {
  const f3 = (x: number) => x.toFixed(3);
  console.log('\n## formats\n');
  console.log('| file | type | words | recall | precision | markup leaked | citations right | char accuracy | cpu ms | note |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.file} | ${r.type} | ${r.words} | ${f3(r.recall)} | ${f3(r.precision)} | ${r.markup} | ${r.citesRight}/${r.cites} | ${r.charAccuracy === undefined ? '–' : f3(r.charAccuracy)} | ${r.cpuMs.toFixed(0)} | ${r.error ?? ''} |`);
  }
  const text = rows.filter((r) => r.charAccuracy === undefined);
  const images = rows.filter((r) => r.charAccuracy !== undefined);
  const cites = rows.reduce((n, r) => n + r.cites, 0);
  const right = rows.reduce((n, r) => n + r.citesRight, 0);
  console.log(
    `| **${rows.length} files** | | | text formats: min ${f3(Math.min(...text.map((r) => r.recall)))} | | ${rows.reduce((n, r) => n + r.markup, 0)} | ${right}/${cites} (${((100 * right) / Math.max(1, cites)).toFixed(1)} %) | images: min ${f3(Math.min(...images.map((r) => r.charAccuracy!)))} | text ${Math.round(text.reduce((n, r) => n + r.cpuMs, 0) / Math.max(1, text.length))} / image ${Math.round(images.reduce((n, r) => n + r.cpuMs, 0) / Math.max(1, images.length))} per file | failed: ${rows.filter((r) => r.error).length} |`,
  );
}
