/**
 * The 80 hard real-world files of ../shared/eval/docs (multi-column, 200+ pages, scanned, encrypted, malformed,
 * truncated, non-Latin scripts, legacy encodings, binary junk, zips that are not Word documents…) through the
 * real type decision of an upload (file-type.ts: a file it refuses fails in its words) → extract (worker, from dist/)
 * → chunk path with the built-in model's tokenizer.
 * Each file must end with text, or with a clear failure or warning, within the 60 s limit; scripts must come out
 * readable. Prints a results table. Needs `npm run build`; skips when the folder is absent.
 * The files are never copied into this repository (their licences vary; some are non-commercial).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { fileType } from '../../src/ingest/file-type.js';
import type { Chunk, DocumentType } from '../../src/ingest/types.js';
import { loadMiniLmTokenizer } from './minilm-tokenizer.js';
import { unmet } from '../helpers/requirement.js';

const ROOT = process.env.DOCSEARCH_EVAL_DOCS_DIR ?? fileURLToPath(new URL('../../../shared/eval/docs/', import.meta.url));
const DIST = new URL('../../dist/ingest/extract.js', import.meta.url);
const present = unmet(existsSync(join(ROOT, 'manifest.tsv')) ? null : `../shared/eval/docs is absent (not found at ${ROOT})`) === null;
const built = unmet(existsSync(DIST) ? null : 'dist/ is not built (npm run build)') === null;

/** Text that must appear in these files, in their own script: proof the decoding is right. */
const READABLE: Record<string, RegExp[]> = {
  'txt/cp932-shift-jis.txt': [/漢字 ひらがな カタカナ/],
  'txt/koi8-r.txt': [/[А-Яа-яЁё]{4,}/],
  'txt/russian-cp866.txt': [/Однажды, в студеную зимнюю пору/],
  'txt/russian-maccyrillic.txt': [/В гимназии он не был в числе первых учеников/],
  'txt/chinese-big5.txt': [/維基大典（Wikipedia）者/],
  'txt/greek-iso-8859-7.txt': [/Η ελληνική αποτελεί τη μητρική γλώσσα/],
  'txt/french-moliere-cp1252.txt': [/MOLIÈRE/, /œ/],
  'txt/iso-8859-1.txt': [/Falsches Üben von Xylophonmusik quält jeden größeren Zwerg/],
  'txt/english-ebcdic-cp500.txt': [/IntelliStation POWER/, /an easy install!/],
  'txt/utf16le-bom.txt': [/Привет мир/, /שלום עולם/, /漢字 日本語 한글/, /😀/],
  'txt/utf16be-bom.txt': [/Привет мир/, /สวัสดีชาวโลก/],
  'txt/utf16le-no-bom.txt': [/Привет мир/, /नमस्ते दुनिया/],
  'txt/utf8-bom.txt': [/Zażółć gęślą jaźń/],
  'docx/tika-japanese-ruby.docx': [/東京/],
  'pdf/hebrew.pdf': [/שלום עולם/],
  'pdf/japanese-academic.pdf': [/マーケットモデル/],
  'pdf/chinese-simplified.pdf': [/[\u4e00-\u9fff]{4,}/],
  'pdf/fullwidth-latin.pdf': [/[A-Za-z]{3,}/],
  'pdf/tracemonkey.pdf': [/Trace-based Just-in-Time Type Specialization for Dynamic Languages/, /Dynamic languages such as JavaScript/],
};

/** Failures a person can act on; anything else (a stack-trace fragment, "undefined") is a bug here. */
const CLEAR_FAILURE =
  /^(the PDF is locked with a password \(encrypted\) — not supported: upload a copy saved without the password|the PDF is compressed with Brotli \(\/BrotliDecode, new in PDF 2\.0\), which docsearch cannot read yet|not a Word document \(\.docx\)|binary file, not text|not a PDF file|the PDF is damaged or truncated: .+|the Word document is damaged( or truncated)? \(.+\)|parsing took longer than \d+ s — gave up|the file could not be parsed \(.+\)|"[^"]+" (is an encrypted Office file or another kind of OLE2 file — not supported|is a damaged ZIP archive \(.+\)|is a ZIP archive of [\d,]+ files? \(.+\), (not|none of them) the parts of a DOCX, XLSX, PPTX, ODF or EPUB document: docsearch does not unpack archives, upload the files in it instead|is not a type docsearch reads|is empty) \(accepted: [^)]+\)|"[^"]+" is an? [^,]+, which this server cannot read: .+)$/;

interface Result {
  file: string;
  outcome: 'ready' | 'failed';
  chunks: number;
  pages?: number;
  message: string;
  seconds: number;
  text: string;
}

const results: Result[] = [];
const work = mkdtempSync(join(tmpdir(), 'docsearch-hard-files-'));

describe.skipIf(!present || !built)('hard real-world files', () => {
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    if (!results.length) return;
    const rows = [...results].sort((a, b) => a.file.localeCompare(b.file));
    const lines = rows.map(
      (r) => `| ${r.file} | ${r.outcome} | ${r.chunks} | ${r.pages ?? ''} | ${r.message} | ${r.seconds.toFixed(1)} |`,
    );
    const ready = rows.filter((r) => r.outcome === 'ready').length;
    const slowest = rows.reduce((a, b) => (b.seconds > a.seconds ? b : a));
    console.log(
      ['| file | outcome | chunks | pages | message | seconds |', '|---|---|---|---|---|---|', ...lines].join('\n') +
        `\n\n${ready} ready, ${rows.length - ready} failed; slowest ${slowest.file} ${slowest.seconds.toFixed(1)} s`,
    );
  });

  it('every file ends with text or a clear failure (the extractor gives up at 60 s: a timeout is a clear failure), readable', { timeout: 290_000 }, async () => {
    const { createExtractor } = (await import(DIST.href)) as typeof import('../../src/ingest/extract.js');
    const extractor = createExtractor({ concurrency: 2, timeoutMs: 60_000 });
    const tokenizer = loadMiniLmTokenizer();
    const files = ['pdf', 'docx', 'txt']
      .flatMap((dir) => readdirSync(join(ROOT, dir)).map((name) => `${dir}/${name}`))
      // Biggest first, so the long parses overlap the many short ones.
      .map((file) => ({ file, bytes: readFileSync(join(ROOT, file)) }))
      .sort((a, b) => b.bytes.length - a.bytes.length);

    const run = async ({ file, bytes }: { file: string; bytes: Buffer }): Promise<void> => {
      const started = performance.now();
      const finish = (r: Omit<Result, 'file' | 'seconds'>): void => {
        results.push({ file, seconds: (performance.now() - started) / 1000, ...r });
      };
      // Typed as an upload is (file-type.ts), on a server that does not convert legacy Office files: a file it
      // refuses is refused in its words.
      const stored = join(work, file.replaceAll('/', '_'));
      writeFileSync(stored, bytes);
      const decided = await fileType({ tempPath: stored, head: bytes.subarray(0, 8192), filename: file.split('/').pop()!, sizeBytes: bytes.length }, 'off');
      if ('refused' in decided) return finish({ outcome: 'failed', chunks: 0, message: decided.refused, text: '' });
      try {
        const doc = await extractor.extract(bytes, decided.type as DocumentType, { filename: file });
        const chunks: Chunk[] = chunkDocument(doc, {
          tokenizer,
          maxTokens: 256,
          overlapTokens: 32,
          title: doc.title ?? file.split('/').pop()!,
        });
        for (const c of chunks) expect(c.tokenCount + 2, file).toBeLessThanOrEqual(256);
        const r: Omit<Result, 'file' | 'seconds'> = {
          outcome: 'ready',
          chunks: chunks.length,
          message: doc.warnings.join('; '),
          text: chunks.map((c) => c.text).join('\n'),
        };
        if (doc.pages !== undefined) r.pages = doc.pages;
        finish(r);
      } catch (err) {
        finish({ outcome: 'failed', chunks: 0, message: (err as Error).message, text: '' });
        expect((err as Error).name, `${file}: ${(err as Error).stack}`).toBe('ParseError');
      }
    };

    // Two documents in flight, matching the extractor's pool, so a file's time is its own parse.
    const queue = [...files];
    await Promise.all(
      [0, 1].map(async () => {
        for (let next = queue.shift(); next; next = queue.shift()) await run(next);
      }),
    );

    expect(results.length).toBe(files.length);
    for (const r of results) {
      // A failure says why clearly; a ready file without chunks says it has no text; a ready file's text is clean.
      expect(r.message, `${r.file} (${r.outcome}, ${r.chunks} chunks)`).toMatch(r.outcome === 'failed' ? CLEAR_FAILURE : r.chunks === 0 ? /no text layer \(scanned\?\)|no text found/ : /[^]*/);
      expect(r.text, `${r.file} has replacement-character runs`).not.toMatch(/\uFFFD{2,}/);
    }
    for (const [file, patterns] of Object.entries(READABLE)) {
      const r = results.find((x) => x.file === file);
      expect(r?.outcome, file).toBe('ready');
      for (const p of patterns) expect(r!.text, `${file} should contain ${p}`).toMatch(p);
    }
  });
});

if (!present || !built) describe('hard real-world files', () => {
  it.skip(
    present
      ? 'needs the build: run `npm run build` so dist/ingest/extract.js exists'
      : `needs ../shared/eval/docs (not found at ${ROOT})`,
    () => {},
  );
});
