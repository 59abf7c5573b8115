/**
 * PDF text quality (npm run bench:extract):
 *
 * 1. generated: the PDFs of test/fixtures/extract (one known text typeset by pdfLaTeX 1 and 2 columns,
 *    Ghostscript, groff, pandoc, LibreOffice, ReportLab; see scripts/make-extract-fixtures.sh) scored against
 *    that text (truth.txt);
 * 2. corpus: the PDFs of ../shared/eval/docs scored against poppler's `pdftotext` (text inside the crop box,
 *    see bboxText; skipped, with a note, when
 *    the folder or pdftotext is absent; files pdftotext cannot read either are not scored, nor pure XFA forms:
 *    pdftotext reads only their "Please wait..." page, which the parser skips for the form).
 *
 * Per file and pooled: word recall and precision, split and glued words, word-bigram order, the share of
 * chunks (the real chunker, built-in model's tokenizer, 256 tokens) holding a broken word, unparsed files.
 * Definitions in bench/extract-score.ts.
 *
 * On the corpus, recall and precision are read against pdftotext's text without its running headers, footers
 * and page numbers (withoutFurniture in extract-score.ts: the parser drops them on purpose); "raw recall" is
 * against its whole output. Split and glued words are judged by the whole output's vocabulary.
 *
 * 3. ocr: image-only PDFs through the OCR engine (bench/extract-ocr.ts);
 * 4. formats: every other format, made by real producers, through the daemon's path (bench/extract-formats.ts).
 *
 * Options: --parser <module> (a module exporting `parse(bytes)`, default src/ingest/parsers/pdf.ts; used to
 * measure an older parser from a checkout of an earlier commit), --corpus <dir>, --only generated|corpus|ocr|formats,
 * --json <file>, --show-broken (print every split and glued word with its context), --show-missed <n> (print
 * the n reference words each file misses most).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { chunkDocument } from '../src/ingest/chunk.js';
import { loadPdf } from '../src/pdf/load.js';
import type { ParsedDocument } from '../src/ingest/types.js';
import { loadMiniLmTokenizer } from '../test/ingest/minilm-tokenizer.js';
import { add, bigramOrder, brokenOccurrences, hasBrokenWord, missedWords, precision, recall, score, type Score, tokens, vocabulary, withoutFurniture, ZERO } from './extract-score.js';

const REPO = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    parser: { type: 'string' },
    corpus: { type: 'string' },
    only: { type: 'string' },
    json: { type: 'string' },
    'show-broken': { type: 'boolean' },
    'show-missed': { type: 'string' },
  },
});

type Parse = (bytes: Uint8Array) => Promise<ParsedDocument>;
const parserPath = resolve(args.parser ?? join(REPO, 'src/ingest/parsers/pdf.ts'));
const { parse } = (await import(pathToFileURL(parserPath).href)) as { parse: Parse };
const tokenizer = loadMiniLmTokenizer();

interface Row {
  set: 'generated' | 'corpus';
  file: string;
  score?: Score;
  /** Corpus only: against pdftotext's whole output, furniture included. */
  raw?: Score;
  /** Corpus only: lines withoutFurniture dropped from the reference. */
  furnitureLines?: number;
  chunks: number;
  brokenChunks: number;
  /** Chunks with a broken word when lost hyphens count as glued words. */
  strictChunks?: number;
  error?: string;
  cpuMs: number;
}

async function run(set: Row['set'], file: string, bytes: Uint8Array, whole: string): Promise<Row> {
  const furniture = set === 'corpus' ? withoutFurniture(whole) : undefined;
  const reference = furniture?.text ?? whole;
  const cpu = process.cpuUsage();
  let doc: ParsedDocument;
  try {
    // pdf2json (the parser before pdf.js) never settles on some files; the product ran it under a 60 s limit.
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no result within 600 s')), 600_000);
    });
    doc = await Promise.race([parse(bytes), limit]).finally(() => clearTimeout(timer));
  } catch (err) {
    return { set, file, chunks: 0, brokenChunks: 0, error: (err as Error).message, cpuMs: cpuMs(cpu) };
  }
  const took = cpuMs(cpu);
  const text = doc.blocks.map((b) => b.text).join('\n');
  const vocab = vocabulary(tokens(whole), whole);
  const chunks = doc.blocks.length
    ? chunkDocument(doc, { tokenizer, maxTokens: 256, overlapTokens: 32, title: doc.title ?? file })
    : [];
  const brokenChunks = chunks.filter((c) => hasBrokenWord(c.text, vocab)).length;
  // Lost hyphens counted as glued words too, to show what the hyphen rule excuses.
  const strict = vocabulary(tokens(whole));
  const strictChunks = chunks.filter((c) => hasBrokenWord(c.text, strict)).length;
  const row: Row = { set, file, score: score(text, reference, vocab), chunks: chunks.length, brokenChunks, cpuMs: took };
  if (strictChunks !== brokenChunks) row.strictChunks = strictChunks;
  if (furniture) {
    row.raw = score(text, whole);
    row.furnitureLines = furniture.dropped;
  }
  if (!doc.blocks.length) row.error = doc.warnings.join('; ') || 'no text';
  if (args['show-broken']) for (const b of brokenOccurrences(text, vocab)) console.error(`${file}: ${b}`);
  if (args['show-missed']) {
    const shown = missedWords(text, reference).slice(0, Number(args['show-missed']));
    console.error(`${file}: missed ${shown.map(([w, n]) => `${w}×${n}`).join(' ')}`);
  }
  return row;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

const rows: Row[] = [];
const notes: string[] = [];

if (args.only === undefined || args.only === 'generated') {
  const dir = join(REPO, 'test/fixtures/extract');
  const truth = readFileSync(join(dir, 'truth.txt'), 'utf8');
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.pdf')).sort()) {
    rows.push(await run('generated', name, readFileSync(join(dir, name)), truth));
  }
}

if (args.only === undefined || args.only === 'corpus') {
  const corpus = resolve(args.corpus ?? process.env.DOCSEARCH_EVAL_DOCS_DIR ?? join(REPO, '../shared/eval/docs'));
  const pdftotext = (file: string): string | undefined => {
    try {
      return cropped(file).map((args) => execFileSync('pdftotext', [...args, '-enc', 'UTF-8', file, '-'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 512 << 20 })).join('\n');
    } catch {
      return undefined;
    }
  };
  if (!existsSync(join(corpus, 'manifest.tsv'))) {
    notes.push(`corpus skipped: ${corpus} not found (pass --corpus or set DOCSEARCH_EVAL_DOCS_DIR)`);
  } else if (pdftotext(join(REPO, 'test/fixtures/extract/pandoc.pdf')) === undefined) {
    notes.push('corpus skipped: pdftotext (poppler-utils) is not installed');
  } else {
    for (const name of readdirSync(join(corpus, 'pdf')).filter((f) => f.endsWith('.pdf')).sort()) {
      const file = join(corpus, 'pdf', name);
      const reference = pdftotext(file);
      if (reference === undefined || tokens(reference).length < 20) {
        notes.push(`${name}: not scored (pdftotext reads no text from it either)`);
        continue;
      }
      if (await pureXfa(readFileSync(file))) {
        notes.push(`${name}: not scored (a pure XFA form: pdftotext reads only its placeholder page)`);
        continue;
      }
      rows.push(await run('corpus', `pdf/${name}`, readFileSync(file), reference));
    }
  }
}

async function pureXfa(bytes: Buffer): Promise<boolean> {
  const task = loadPdf(new Uint8Array(bytes), { xfa: true });
  try {
    return (await task.promise).isPureXfa;
  } catch {
    return false;
  } finally {
    await task.destroy();
  }
}

/**
 * pdftotext's arguments for each run of pages with the same crop box. Its plain output otherwise keeps text
 * outside the crop box (printer's slugs, line numbers in the bleed), which no reader sees and pdf.js drops.
 */
function cropped(file: string): string[][] {
  let info: string;
  try {
    info = execFileSync('pdfinfo', ['-box', '-f', '1', '-l', '100000', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [[]];
  }
  const boxes = new Map<number, { media?: number[]; crop?: number[]; rot?: number }>();
  for (const m of info.matchAll(/^Page\s+(\d+) (MediaBox|CropBox|rot):\s+(.+)$/gm)) {
    const page = boxes.get(Number(m[1])) ?? {};
    const nums = m[3]!.trim().split(/\s+/).map(Number);
    if (m[2] === 'MediaBox') page.media = nums;
    else if (m[2] === 'CropBox') page.crop = nums;
    else page.rot = nums[0]!;
    boxes.set(Number(m[1]), page);
  }
  const runs: { first: number; last: number; key: string; args: string[] }[] = [];
  for (const [page, b] of [...boxes.entries()].sort(([a], [c]) => a - c)) {
    const [mx0, , , my1] = b.media ?? [];
    const [cx0, cy0, cx1, cy1] = b.crop ?? [];
    const crop = b.rot === 0 && b.media && b.crop && (cx0 !== mx0 || cy1 !== my1 || cy0 !== b.media[1] || cx1 !== b.media[2]);
    const args = crop ? ['-x', String(Math.floor(cx0! - mx0!)), '-y', String(Math.floor(my1! - cy1!)), '-W', String(Math.ceil(cx1! - cx0!)), '-H', String(Math.ceil(cy1! - cy0!))] : [];
    const key = args.join(' ');
    const last = runs[runs.length - 1];
    if (last && last.key === key && last.last === page - 1) last.last = page;
    else runs.push({ first: page, last: page, key, args });
  }
  if (!runs.length) return [[]];
  return runs.map((r) => ['-f', String(r.first), '-l', String(r.last), ...r.args]);
}

const pct = (x: number): string => (100 * x).toFixed(1);
const f3 = (x: number): string => x.toFixed(3);

console.log(`parser: ${parserPath.replace(REPO + '/', '')}; machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const set of ['generated', 'corpus'] as const) {
  const mine = rows.filter((r) => r.set === set);
  if (!mine.length) continue;
  const corpus = set === 'corpus';
  console.log(`\n## ${set}\n`);
  console.log(`| file | words | recall | ${corpus ? 'raw recall | ' : ''}precision | split | glued | lost hyphens | bigram order | chunks with a broken word | cpu ms | note |`);
  console.log(`|---|---|---|${corpus ? '---|' : ''}---|---|---|---|---|---|---|---|`);
  let pooled = ZERO;
  let pooledRaw = ZERO;
  let chunks = 0;
  let broken = 0;
  let strictBroken = 0;
  let unparsed = 0;
  for (const r of mine) {
    if (r.error && !r.score) unparsed++;
    if (r.score) pooled = add(pooled, r.score);
    if (r.raw) pooledRaw = add(pooledRaw, r.raw);
    chunks += r.chunks;
    broken += r.brokenChunks;
    strictBroken += r.strictChunks ?? r.brokenChunks;
    const s = r.score;
    console.log(
      s
        ? `| ${r.file} | ${s.refWords} | ${f3(recall(s))} | ${r.raw ? `${f3(recall(r.raw))} | ` : ''}${f3(precision(s))} | ${s.split} | ${s.glued} | ${s.lostHyphens} | ${f3(bigramOrder(s))} | ${r.brokenChunks}/${r.chunks} | ${r.cpuMs.toFixed(0)} | ${[r.error, r.furnitureLines ? `furniture: ${r.furnitureLines} lines` : '', r.strictChunks ? `${r.strictChunks} chunks counting lost hyphens` : ''].filter(Boolean).join('; ')} |`
        : `| ${r.file} | – | – | ${corpus ? '– | ' : ''}– | – | – | – | – | – | ${r.cpuMs.toFixed(0)} | failed: ${r.error} |`,
    );
  }
  const per2000 = pooled.refWords ? ((pooled.split + pooled.glued) * 2000) / pooled.refWords : 0;
  console.log(
    `| **pooled (${mine.length} files)** | ${pooled.refWords} | ${f3(recall(pooled))} | ${corpus ? `${f3(recall(pooledRaw))} | ` : ''}${f3(precision(pooled))} | ${pooled.split} | ${pooled.glued} | ${pooled.lostHyphens} | ${f3(bigramOrder(pooled))} | ${broken}/${chunks} (${pct(chunks ? broken / chunks : 0)} %) | ${mine.reduce((n, r) => n + r.cpuMs, 0).toFixed(0)} | unparsed: ${unparsed}; counting lost hyphens ${strictBroken}/${chunks} (${pct(chunks ? strictBroken / chunks : 0)} %); split+glued per 2,000 words: ${per2000.toFixed(2)} |`,
  );
}
for (const n of notes) console.log(`- ${n}`);
if (args.only === undefined || args.only === 'ocr') {
  // Part 3: image-only versions of generated pages through the OCR engine in dist/.
  const { runOcrBench, printOcrBench, runApiBench, printApiBench } = await import('./extract-ocr.js');
  printOcrBench(await runOcrBench());
  printApiBench([await runApiBench('auto'), await runApiBench('tesseract.js')]);
}
let formats: unknown[] = [];
if (args.only === undefined || args.only === 'formats') {
  // Part 4: every format, through the daemon's path in dist/.
  const { runFormatsBench, printFormatsBench } = await import('./extract-formats.js');
  const formatRows = await runFormatsBench();
  printFormatsBench(formatRows);
  formats = formatRows;
}
if (args.json) writeFileSync(args.json, JSON.stringify({ parser: parserPath, rows, notes, formats }, null, 2));
// A parser that never settled may hold the event loop open.
process.exit(0);
