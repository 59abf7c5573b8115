import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseDocx } from '../../src/ingest/parsers/docx.js';
import { ParseError } from '../../src/ingest/parsers/errors.js';
import { parse as parsePdf } from '../../src/ingest/parsers/pdf.js';
import { decodeText } from '../../src/ingest/parsers/text-encoding.js';
import { parse as parseTxt } from '../../src/ingest/parsers/txt.js';
import { makeDocx, makePdf, makeZip, para, table } from './build-fixtures.js';

async function failure(p: Promise<unknown>): Promise<ParseError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParseError);
  expect((err as ParseError).permanent).toBe(true);
  return err as ParseError;
}

const LOREM =
  'The quick brown fox jumps over the lazy dog near the riverbank while the sun sets slowly behind the hills.';

describe('TXT parser', () => {
  const cases: [string, string, Buffer][] = [
    ['UTF-8', 'Größe und Übermaß — naïve café', Buffer.from('Größe und Übermaß — naïve café', 'utf8')],
    ['UTF-8 with BOM', 'hello world', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('hello world')])],
    ['UTF-16LE with BOM', 'Привет, мир', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Привет, мир', 'utf16le')])],
    ['UTF-16BE with BOM', 'hello there', Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode('hello there', 'utf-16be')])],
    ['UTF-16LE without BOM', 'plain ascii in utf-16', Buffer.from('plain ascii in utf-16', 'utf16le')],
    ['windows-1252', 'Molière écrivit « Le Misanthrope » en 1666 — œuvre célèbre.', iconv.encode('Molière écrivit « Le Misanthrope » en 1666 — œuvre célèbre.', 'windows-1252')],
    ['KOI8-R', 'Однажды в студёную зимнюю пору я из лесу вышел', iconv.encode('Однажды в студёную зимнюю пору я из лесу вышел', 'koi8-r')],
    ['windows-1251', 'Однажды в студёную зимнюю пору я из лесу вышел', iconv.encode('Однажды в студёную зимнюю пору я из лесу вышел', 'windows-1251')],
    ['cp866', 'Однажды в студёную зимнюю пору я из лесу вышел', iconv.encode('Однажды в студёную зимнюю пору я из лесу вышел', 'cp866')],
    ['Shift_JIS', '日本語のテキストです。東京は日本の首都です。', iconv.encode('日本語のテキストです。東京は日本の首都です。', 'shift_jis')],
    ['Big5', '維基百科是一個自由的百科全書，任何人都可以編輯。', iconv.encode('維基百科是一個自由的百科全書，任何人都可以編輯。', 'big5')],
  ];
  for (const [name, expected, bytes] of cases) {
    it(`decodes ${name}`, async () => {
      const doc = await parseTxt(bytes);
      expect(doc.blocks.map((b) => b.text).join('\n')).toBe(expected);
    });
  }

  it('reads UTF-16 without a BOM in scripts whose letters have no zero byte (Cyrillic, Devanagari)', async () => {
    for (const text of ['Однажды в студёную зимнюю пору я из лесу вышел; был сильный мороз.', 'हिन्दी विकिपीडिया एक मुक्त ज्ञानकोश है जिसे कोई भी संपादित कर सकता है।']) {
      const doc = await parseTxt(Buffer.from(text, 'utf16le'));
      expect(doc.blocks.map((b) => b.text).join('\n')).toBe(text);
    }
  });

  it('reads ASCII that is mostly spaces as the ASCII it is, not as UTF-16 (a fixed-width report, deeply indented code)', async () => {
    const report = Array.from({ length: 60 }, (_, i) => `${`item${i}`.padEnd(40)}${'qty'.padEnd(30)}${i % 10}`).join('\n');
    const code = Array.from({ length: 60 }, (_, i) => `${' '.repeat(48)}call(step${i});`).join('\n');
    for (const [text, words] of [[report, ['item7', 'qty']], [code, ['call(step7);']]] as const) {
      expect(decodeText(Buffer.from(text))?.encoding).toBe('utf-8');
      const read = (await parseTxt(Buffer.from(text))).blocks.map((b) => b.text).join('\n');
      for (const w of words) expect(read).toContain(w);
      expect(read).not.toMatch(/[\u2000-\u20ff\u3400-\u9fff]/);
    }
  });

  it('decodes EBCDIC (cp500) text', async () => {
    // "Hello, World!" in cp500, line break as NEL (0x15).
    const bytes = Buffer.from([0xc8, 0x85, 0x93, 0x93, 0x96, 0x6b, 0x40, 0xe6, 0x96, 0x99, 0x93, 0x84, 0x4f, 0x15,
      0xe3, 0x88, 0x89, 0xa2, 0x40, 0x89, 0xa2, 0x40, 0x81, 0x40, 0xa3, 0x85, 0xa2, 0xa3, 0x4b]);
    const doc = await parseTxt(bytes);
    expect(doc.blocks[0]!.text).toBe('Hello, World!\nThis is a test.');
  });

  it('rejects binary junk', async () => {
    const junk = Buffer.alloc(4096);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919) % 256;
    expect((await failure(parseTxt(junk))).message).toBe('binary file, not text');
  });

  it('splits paragraphs on blank lines and reads Markdown headings', async () => {
    const doc = await parseTxt(Buffer.from(`# Guide\n\nIntro line one\nline two\n\n## Setup\n\nInstall it.\n\n\nRun it.\n`));
    expect(doc.title).toBe('Guide');
    expect(doc.blocks).toEqual([
      { text: 'Guide', headings: ['Guide'], kind: 'heading' },
      { text: 'Intro line one\nline two', headings: ['Guide'], kind: 'paragraph' },
      { text: 'Setup', headings: ['Guide', 'Setup'], kind: 'heading' },
      { text: 'Install it.', headings: ['Guide', 'Setup'], kind: 'paragraph' },
      { text: 'Run it.', headings: ['Guide', 'Setup'], kind: 'paragraph' },
    ]);
  });

  it('does not take a block of "#" comment lines for headings', async () => {
    const doc = await parseTxt(Buffer.from('# Licensed to you\n# under the terms\n# of a licence\n\nBody text.'));
    expect(doc.blocks.every((b) => b.kind === 'paragraph')).toBe(true);
  });
});

describe('PDF parser', () => {
  // pdf.js may print to the console; in production the extractor's worker swallows it.
  beforeAll(() => {
    for (const m of ['log', 'warn', 'error', 'info'] as const) vi.spyOn(console, m).mockImplementation(() => {});
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  it('keeps page numbers, joins lines into paragraphs and undoes hyphenation', async () => {
    const pdf = makePdf(
      [
        [{ lines: ['Introduction'], size: 20 }, { lines: ['', '', 'Search engines index docu-', 'ments so that people find them.'] }],
        [{ lines: ['Second page text stays on page two.'] }],
      ],
      { title: 'A Tiny Paper' },
    );
    const doc = await parsePdf(pdf);
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe('A Tiny Paper');
    expect(doc.warnings).toEqual([]);
    const text = doc.blocks.map((b) => `${b.page}:${b.kind}:${b.text}`);
    expect(text).toContain('1:heading:Introduction');
    expect(text).toContain('1:paragraph:Search engines index documents so that people find them.');
    expect(text).toContain('2:paragraph:Second page text stays on page two.');
    expect(doc.blocks.find((b) => b.page === 2)!.headings).toEqual(['Introduction']);
  });

  it('reads two columns left column first', async () => {
    const left = ['Left column first line of', 'text continues here and', 'ends the left column.'];
    const right = ['Right column starts after', 'the left one is done and', 'finishes the page.'];
    const doc = await parsePdf(makePdf([[{ lines: left, x: 60 }, { lines: right, x: 320 }]]));
    const all = doc.blocks.map((b) => b.text).join(' ');
    expect(all.indexOf('ends the left column.')).toBeLessThan(all.indexOf('Right column starts'));
    expect(all).toContain('Left column first line of text continues here and ends the left column.');
  });

  it('reports a PDF without text as having no text layer', async () => {
    // Same length as "/Font", so the xref offsets stay right: a PDF that draws nothing as text.
    const noFont = Buffer.from(makePdf([[{ lines: [] }]]).toString('latin1').replace(/\/Font/g, '/XObj'), 'latin1');
    const doc = await parsePdf(noFont);
    expect(doc.blocks).toEqual([]);
    expect(doc.warnings).toEqual(['no text layer (scanned?)']);
  });

  it('fails a truncated PDF with a message a person understands', async () => {
    const pdf = makePdf([[{ lines: [LOREM, LOREM, LOREM] }]]);
    const err = await failure(parsePdf(pdf.subarray(0, Math.floor(pdf.length / 2))));
    expect(err.message).toMatch(/^the PDF is damaged or truncated: /);
  });

  it('fails a PDF that needs a password', async () => {
    const pdf = makePdf([[{ lines: [LOREM] }]]).toString('latin1');
    const encrypted = pdf
      .replace('/Root 1 0 R', '/Root 1 0 R /Encrypt << /Filter /Standard /V 1 /R 2 /O (0123456789abcdef0123456789abcdef) /U (fedcba9876543210fedcba9876543210) /P -44 >> /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]');
    const err = await parsePdf(Buffer.from(encrypted, 'latin1')).then(() => null, (e: unknown) => e as Error);
    expect(err?.message).toBe('encrypted PDF — not supported');
  });

  it('refuses bytes without a PDF header', async () => {
    expect((await failure(parsePdf(Buffer.from('<html>not a pdf</html>')))).message).toBe('not a PDF file (no %PDF header)');
  });
});

describe('DOCX parser', () => {
  it('keeps headings, paragraphs, lists, tables and footnotes', async () => {
    const body =
      para('Installation', { style: 'Heading1' }) +
      para('Download the package.', { footnote: 1 }) +
      para('Unpack it', { list: true }) +
      para('Run setup', { list: true }) +
      para('Options', { style: 'Heading2' }) +
      table([
        ['Flag', 'Meaning'],
        ['-v', 'verbose'],
      ]);
    const doc = await parseDocx(makeDocx(body, { 1: 'Mirrors are listed on the site.' }));
    expect(doc.blocks).toEqual([
      { text: 'Installation', headings: ['Installation'], kind: 'heading' },
      { text: 'Download the package.', headings: ['Installation'], kind: 'paragraph' },
      { text: 'Unpack it', headings: ['Installation'], kind: 'list' },
      { text: 'Run setup', headings: ['Installation'], kind: 'list' },
      { text: 'Options', headings: ['Installation', 'Options'], kind: 'heading' },
      { text: 'Flag | Meaning\n-v | verbose', headings: ['Installation', 'Options'], kind: 'table' },
      { text: 'Mirrors are listed on the site.', headings: ['Installation', 'Options'], kind: 'footnote' },
    ]);
  });

  it('says a zip without word/document.xml is not a Word document', async () => {
    const err = await failure(parseDocx(makeZip({ 'hello.txt': 'hello' })));
    expect(err.message).toBe('not a Word document (.docx)');
  });

  it('fails a truncated .docx clearly', async () => {
    const docx = makeDocx(para('hello'));
    const err = await failure(parseDocx(docx.subarray(0, 200)));
    expect(err.message).toMatch(/^the Word document is damaged or truncated/);
  });

  it('refuses an encrypted (OLE2) file', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);
    expect((await failure(parseDocx(ole))).message).toBe('encrypted or legacy .doc — not supported');
  });

  it('refuses a zip bomb before mammoth sees it', async () => {
    const bomb = makeZip({ 'word/document.xml': Buffer.alloc(4 * 1024 * 1024) });
    expect((await failure(parseDocx(bomb))).message).toMatch(/possible zip bomb/);
    const big = makeDocx(para('fine'));
    const err = await failure(parseDocx(big, { zipLimits: { maxTotalUncompressed: 500 } }));
    expect(err.message).toMatch(/would expand to more than .* possible zip bomb/);
    expect((await failure(parseDocx(big, { zipLimits: { maxEntries: 2 } }))).message).toMatch(/too many parts/);
    expect((await failure(parseDocx(big, { zipLimits: { maxXml: 500 } }))).message).toMatch(/text parts expand to more than 0 MB of XML — too large to parse/);
  });

  it('warns when a document has no text', async () => {
    const doc = await parseDocx(makeDocx(''));
    expect(doc.blocks).toEqual([]);
    expect(doc.warnings).toEqual(['no text found (empty document?)']);
  });
});
