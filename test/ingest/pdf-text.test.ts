/**
 * PDF text through pdf.js: the generated set of test/fixtures/extract (one known text typeset by seven
 * producers) scored against its truth with the bench's own measures, page furniture and line-end hyphens on
 * small built PDFs, hard corpus files of ../shared/eval/docs (skipped with a reason when absent), and the
 * decompression-bomb bound through the real parse worker (needs `npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeflate } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { bigramOrder, hasBrokenWord, recall, score, tokens, vocabulary } from '../../bench/extract-score.js';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { parse } from '../../src/ingest/parsers/pdf.js';
import { REPO, SHARED } from '../helpers/daemon.js';
import { makePdf } from './build-fixtures.js';
import { loadMiniLmTokenizer } from './minilm-tokenizer.js';
import { unmet } from '../helpers/requirement.js';

const FIXTURES = join(REPO, 'test/fixtures/extract');
const TRUTH = readFileSync(join(FIXTURES, 'truth.txt'), 'utf8');
const GENERATED = readdirSync(FIXTURES).filter((f) => f.endsWith('.pdf')).sort();
const text = (doc: { blocks: { text: string }[] }): string => doc.blocks.map((b) => b.text).join('\n');

describe('generated PDFs against their known text', () => {
  const tokenizer = loadMiniLmTokenizer();
  const vocab = vocabulary(tokens(TRUTH), TRUTH);

  it.each(GENERATED)('%s: every word, unbroken, in order, with its page', async (file) => {
    const doc = await parse(readFileSync(join(FIXTURES, file)));
    const s = score(text(doc), TRUTH);
    expect(recall(s), file).toBeGreaterThanOrEqual(0.995);
    expect(s.split + s.glued, `${file}: split ${s.split}, glued ${s.glued}`).toBeLessThanOrEqual(Math.floor(s.refWords / 2000));
    expect(bigramOrder(s), file).toBeGreaterThanOrEqual(0.98);
    // Running headers, footers and page numbers are gone: nothing beyond the known text is left.
    expect(s.words - s.matched, file).toBeLessThanOrEqual(s.refWords * 0.005);
    expect(doc.blocks.every((b) => Number.isInteger(b.page) && b.page! >= 1 && b.page! <= doc.pages!)).toBe(true);
    expect(new Set(doc.blocks.map((b) => b.page)).size).toBe(doc.pages);
    const chunks = chunkDocument(doc, { tokenizer, maxTokens: 256, overlapTokens: 32, title: file });
    expect(chunks.filter((c) => hasBrokenWord(c.text, vocab)).map((c) => c.text)).toEqual([]);
  });

  it('reads a two-column page column by column', async () => {
    const doc = await parse(readFileSync(join(FIXTURES, 'latex-2col.pdf')));
    const all = text(doc).replace(/\s+/g, ' ');
    // The first page's left column ends mid-paragraph and its right column goes on with it.
    expect(all).toContain('The GNU General Public License is a free, copyleft license for software and other kinds of works.');
    expect(all).toContain('to guarantee your freedom to share and change all versions of a program');
  });
});

describe('page furniture and hyphens', () => {
  const body = (n: number): string[] => [
    `Paragraph ${n} talks about searching libraries of documents,`,
    'and this line continues it with more words about the',
    'subject so that the page has a body of several lines.',
  ];

  it.each([
    ['-N-', (n: number) => `-${n}-`],
    ['- N -', (n: number) => `- ${n} -`],
    ['Page N of M', (n: number) => `Page ${n} of 2`],
    ['N / M', (n: number) => `${n} / 2`],
    ['N', (n: number) => `${n}`],
  ])('drops a running header and "%s" page numbers from a 2-page document', async (_, number) => {
    const page = (n: number) => [
      { lines: ['Quarterly Report of the Library Committee'], size: 9, y: 760 },
      { lines: body(n), y: 700 },
      { lines: [number(n)], size: 9, x: 290, y: 40 },
    ];
    const doc = await parse(makePdf([page(1), page(2)]));
    const all = text(doc);
    expect(all).not.toMatch(/Quarterly Report/);
    expect(all).not.toMatch(/^-? ?\d/m);
    expect(all).not.toMatch(/Page \d|\d \/ 2/);
    expect(doc.blocks.map((b) => b.page)).toEqual([1, 2]);
    expect(all).toContain('Paragraph 2 talks about searching libraries');
  });

  it('keeps a bare number that cannot be a page number', async () => {
    const doc = await parse(makePdf([[{ lines: body(1), y: 700 }, { lines: ['2021'], size: 9, x: 290, y: 40 }]]));
    expect(text(doc)).toMatch(/2021$/);
  });

  it('keeps a line that merely starts like a header when it does not repeat', async () => {
    const doc = await parse(makePdf([[{ lines: ['Quarterly Report of the Library Committee'], size: 9, y: 760 }, { lines: body(1), y: 700 }]]));
    expect(text(doc)).toContain('Quarterly Report of the Library Committee');
  });

  it.each([false, true])('reads a hyphen glyph that the font maps to U+00AD as a hyphen inside a line (CMap deflated: %s)', async (deflate) => {
    const lines = [
      'Filing status for same-sex couples and self-employed people with quali-',
      'fied dividends; see irs.gov/pub/irs-irbs for qualified ones.',
    ];
    const doc = await parse(makePdf([[{ lines }]], { toUnicode: ['<2D> <00AD>'], deflate }));
    // pdf.js alone drops the glyph: "samesex", "selfemployed", "irsirbs".
    expect(text(doc)).toBe('Filing status for same-sex couples and self-employed people with qualified dividends; see irs.gov/pub/irs-irbs for qualified ones.');
  });

  it('rejoins hyphenated words at line ends, keeping real compounds', async () => {
    const doc = await parse(
      makePdf([[{ lines: [
        'A copyright-like rule covers this excep-',
        'tion and other excep- tions; the search engine is copyright-',
        'like in this respect and docu-',
        'ments stay readable.',
      ] }]]),
    );
    expect(text(doc)).toBe('A copyright-like rule covers this exception and other excep- tions; the search engine is copyright-like in this respect and documents stay readable.');
  });

  it('joins a word hyphenated across a page break', async () => {
    const doc = await parse(makePdf([[{ lines: ['The last line of the first page ends with a hyphen-'] }], [{ lines: ['ated word and goes on.'] }]]));
    expect(text(doc)).toContain('hyphenated word and goes on.');
  });

  it('lists pages without a text layer for OCR and gives them no blocks', async () => {
    const doc = await parse(makePdf([[{ lines: body(1) }], [{ lines: [] }], [{ lines: body(3) }]]));
    expect(doc.ocrPages).toEqual([2]);
    expect(doc.blocks.map((b) => b.page)).toEqual([1, 3]);
    expect(doc.warnings).toEqual(['1 of 3 pages have no usable text layer (scanned?): page 2']);
  });
});

const DOCS = process.env.DOCSEARCH_EVAL_DOCS_DIR ?? join(SHARED, 'eval/docs');
const corpus = unmet(existsSync(join(DOCS, 'manifest.tsv')) ? null : `../shared/eval/docs is absent (not found at ${DOCS})`) === null;

describe.skipIf(!corpus)('hard corpus PDFs', () => {
  const read = (name: string) => parse(readFileSync(join(DOCS, 'pdf', name)));

  it('keeps the readable pages of a PDF with a damaged page and names the damage', async () => {
    const doc = await read('bad-page-in-19p.pdf');
    expect(doc.pages).toBe(19);
    expect(new Set(doc.blocks.map((b) => b.page)).size).toBeGreaterThanOrEqual(18);
    expect(doc.warnings.join(' ')).toMatch(/page.* 13 .*damaged/);
  });

  it('reads Thai', async () => {
    expect(text(await read('thai.pdf'))).toMatch(/[\u0e00-\u0e7f]{8,}/);
  });

  it('reads the invisible OCR layer of scanned pages', async () => {
    expect(text(await read('scanned-ccitt-with-ocr-layer.pdf')).length).toBeGreaterThan(500);
    expect(text(await read('scanned-jbig2-bad-ocr-layer-ru.pdf'))).toMatch(/[а-яё]{5,}/i);
  });

  it('keeps math letters outside the BMP', async () => {
    expect(text(await read('two-column-latex.pdf'))).toMatch(/𝑓\(𝑥\) = sin 𝑥 \+ cos 𝑥/u);
  });

  // 206 pages: about 6 s of CPU, far more wall-clock time on a busy machine.
  it('rejoins words whose hyphen a font maps to U+00AD (which pdf.js drops)', { timeout: 300_000 }, async () => {
    const all = text(await read('irs-1040-instructions-206p.pdf'));
    expect(all).toContain('Nonresident aliens and dual-status aliens.');
    expect(all).not.toMatch(/\bali ens\b|\bdualstatus\b/);
    // The booklet's "Page N of 206 fileid: …" footer is furniture.
    expect(all).not.toMatch(/fileid:/);
  });

  it('lists an image-only PDF for OCR', async () => {
    const doc = await read('image-only-happy-new-year.pdf');
    expect(doc.blocks).toEqual([]);
    expect(doc.ocrPages).toEqual([1]);
    expect(doc.warnings).toEqual(['no text layer (scanned?)']);
  });
});

if (!corpus) describe('hard corpus PDFs', () => {
  it.skip(`needs ../shared/eval/docs (not found at ${DOCS}; set DOCSEARCH_EVAL_DOCS_DIR)`, () => {});
});

const DIST = join(REPO, 'dist/ingest/extract.js');

describe.skipIf(unmet(existsSync(DIST) ? null : 'dist/ is not built (npm run build)') !== null)('decompression bomb', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pdf-bomb-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A one-page PDF whose content stream is 1 GiB of spaces, deflated to about 1 MB. */
  async function bomb(): Promise<Buffer> {
    const deflate = createDeflate({ level: 9 });
    const parts: Buffer[] = [];
    deflate.on('data', (c: Buffer) => parts.push(c));
    const done = new Promise((resolve) => deflate.on('end', resolve));
    const block = Buffer.alloc(16 << 20, 0x20);
    for (let i = 0; i < 64; i++) if (!deflate.write(block)) await new Promise((r) => deflate.once('drain', r));
    deflate.end();
    await done;
    const stream = Buffer.concat(parts);
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    ];
    let out = Buffer.from('%PDF-1.4\n', 'latin1');
    const offsets: number[] = [];
    const push = (b: Buffer) => (out = Buffer.concat([out, b]));
    objects.forEach((body, i) => {
      offsets.push(out.length);
      push(Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`, 'latin1'));
    });
    offsets.push(out.length);
    push(Buffer.from(`4 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'));
    push(stream);
    push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
    const xref = out.length;
    push(Buffer.from(`xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, 'latin1'));
    return out;
  }

  it('refuses a 1 MB flate bomb with a clear message, peak RSS far below 1.5 GiB', { timeout: 120_000 }, async () => {
    const file = join(dir, 'bomb.pdf');
    const pdf = await bomb();
    expect(pdf.length).toBeLessThan(1.5 * 2 ** 20);
    writeFileSync(file, pdf);
    // A fresh process, so its peak RSS (VmHWM) is this parse's alone.
    const script = `
      import { readFileSync } from 'node:fs';
      const { createExtractor } = await import(${JSON.stringify(DIST)});
      const extractor = createExtractor({ concurrency: 1 });
      let message = 'parsed';
      try { await extractor.extract(readFileSync(${JSON.stringify(file)}), 'application/pdf'); } catch (err) { message = err.message; }
      await extractor.close();
      const hwm = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
      console.log(JSON.stringify({ message, hwm }));`;
    writeFileSync(join(dir, 'run.mjs'), script);
    const out = JSON.parse(execFileSync(process.execPath, [join(dir, 'run.mjs')], { encoding: 'utf8' })) as { message: string; hwm: number };
    expect(out.message).toMatch(/decompression bomb/);
    expect(out.hwm).toBeLessThan(1.5 * 2 ** 30);
  });
});
