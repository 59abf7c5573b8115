import { brotliCompressSync, crc32, deflateRawSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseCsv, records } from '../../src/ingest/parsers/csv.js';
import { parse as parseDocx } from '../../src/ingest/parsers/docx.js';
import { ParseError } from '../../src/ingest/parsers/errors.js';
import { parse as parseEmail } from '../../src/ingest/parsers/email.js';
import { parse as parseImage } from '../../src/ingest/parsers/image.js';
import { parse as parsePdf } from '../../src/ingest/parsers/pdf.js';
import { parse as parseRtf } from '../../src/ingest/parsers/rtf.js';
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

  it('reads Chinese and Korean UTF-16 without a BOM (with a space, digit or line break), either byte order; the legacy CJK code pages stay themselves', async () => {
    // Han and Hangul spread their high bytes over dozens of values: such files were refused as binary.
    const zh = '东京是日本的首都，也是世界上人口最多的城市之一。2024年，东京的人口超过一千四百万。维基百科是一个自由的百科全书，任何人都可以编辑。';
    const ko = '대한민국의 수도는 서울이다. 한강이 도시를 가로지른다. 서울의 인구는 약 천만 명이며, 나라의 정치와 경제의 중심지이다.';
    for (const [text, encoding] of [[zh, 'utf-16le'], [ko, 'utf-16le'], [`${zh}\n${zh}`, 'utf-16be'], [ko, 'utf-16be']] as const) {
      const bytes = iconv.encode(text, encoding);
      expect(decodeText(bytes)?.encoding, `${encoding}: ${text}`).toBe(encoding);
      expect((await parseTxt(bytes)).blocks.map((b) => b.text).join('\n')).toBe(text);
    }
    for (const [text, encoding, detected] of [[zh, 'gb18030', 'GB18030'], [ko, 'euc-kr', 'EUC-KR'], [`${zh}\n${ko}`, 'utf-8', 'utf-8']] as const) {
      expect(decodeText(iconv.encode(text, encoding))?.encoding, encoding).toBe(detected);
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

  // The rest of docs/ingest.md's TXT order: UTF-32 BOMs, EBCDIC's other code page, the CJK multi-byte encodings
  // chardet names, a Latin-2 code page, and control characters without a NUL.
  const more: [string, string, Buffer][] = [
    ['UTF-32LE with BOM', 'Größe — 日本語', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), iconv.encode('Größe — 日本語', 'utf-32le')])],
    ['UTF-32BE with BOM', 'Größe — 日本語', Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), iconv.encode('Größe — 日本語', 'utf-32be')])],
    ['EUC-JP', '日本語のテキストです。東京は日本の首都です。大阪は商業の町です。', iconv.encode('日本語のテキストです。東京は日本の首都です。大阪は商業の町です。', 'euc-jp')],
    ['GB18030', '维基百科是一个自由的百科全书，任何人都可以编辑。北京是中国的首都。', iconv.encode('维基百科是一个自由的百科全书，任何人都可以编辑。北京是中国的首都。', 'gb18030')],
    ['ISO-8859-2', 'Zażółć gęślą jaźń. Łódź leży w środkowej Polsce, a Kraków na południu kraju.', iconv.encode('Zażółć gęślą jaźń. Łódź leży w środkowej Polsce, a Kraków na południu kraju.', 'iso-8859-2')],
  ];
  for (const [name, expected, bytes] of more) {
    it(`decodes ${name}`, async () => {
      expect((await parseTxt(bytes)).blocks.map((b) => b.text).join('\n')).toBe(expected);
    });
  }

  it('tells EBCDIC cp037 from cp500 by their punctuation (they differ in ! [ ] ^ |)', async () => {
    // iconv-lite has no EBCDIC: the bytes by hand (letters and space are the same in both; "!" is 0x5A in cp037, 0x4F in cp500).
    const text = 'Stop now! Hello there! Watch out! It works! Done!';
    const ebcdic = (bang: number) =>
      Buffer.from(Array.from(text, (c) => {
        if (c === ' ') return 0x40;
        if (c === '!') return bang;
        const lower = c.toLowerCase();
        const upper = c === lower ? 0 : 0x40;
        const i = lower.charCodeAt(0) - 97;
        return upper + (i < 9 ? 0x81 + i : i < 18 ? 0x91 + i - 9 : 0xa2 + i - 18);
      }));
    expect((await parseTxt(ebcdic(0x5a))).blocks[0]!.text).toBe(text);
    expect((await parseTxt(ebcdic(0x4f))).blocks[0]!.text).toBe(text);
  });

  it('calls text with more than 5 % control characters binary, with no NUL in it', async () => {
    const words = 'plain words in a line\n'.repeat(20);
    const dirty = Buffer.from(Array.from(words, (c, i) => (i % 10 === 0 ? '\x07' : c)).join(''), 'latin1');
    expect(dirty.includes(0)).toBe(false);
    expect((await failure(parseTxt(dirty))).message).toBe('binary file, not text');
    const few = Buffer.from(Array.from(words, (c, i) => (i % 40 === 0 ? '\x07' : c)).join(''), 'latin1');
    expect((await parseTxt(few)).blocks.length).toBeGreaterThan(0);
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

  it('cuts closing "#"s and padding off a heading, keeps a "#" inside it, and leaves "#word" a paragraph', async () => {
    const doc = await parseTxt(Buffer.from('## Tides ##   \n\n### C# and F#\t\n\n#hashtag\n\n#   Spaced out   #\n'));
    expect(doc.blocks.map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Tides'],
      ['heading', 'C# and F'],
      ['paragraph', '#hashtag'],
      ['heading', 'Spaced out'],
    ]);
  });
});

describe('CSV parser', () => {
  it('reads RFC 4180 quoting: separators, doubled quotes and line breaks inside quotes; CRLF and LF rows', () => {
    const text = 'a,"b, c","say ""hi""",d"e\r\n"two\nlines",,x\n"open';
    expect([...records(text, ',')]).toEqual([
      ['a', 'b, c', 'say "hi"', 'd"e'],
      ['two\nlines', '', 'x'],
      ['open'],
    ]);
    expect([...records('1;2\t3;"4;5"', ';')]).toEqual([['1', '2\t3', '4;5']]);
  });

  it('names cells by the header row and takes the semicolon when the first line has more of them', async () => {
    const doc = await parseCsv(Buffer.from('vessel;cargo\nAurora;"timber; oak"\n'));
    expect(doc.blocks).toEqual([{ text: 'vessel: Aurora · cargo: timber; oak', page: 2, headings: [], kind: 'table' }]);
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
    // "encrypted PDF — not supported" told neither that a password locks it nor what to do.
    expect(err?.message).toBe('the PDF is locked with a password (encrypted) — not supported: upload a copy saved without the password');
  });

  it('names Brotli compression (PDF 2.0) instead of calling the file damaged or textless', async () => {
    // Its streams, cross-reference stream included, were read as "its cross-reference table is broken" or as pages without text.
    const pdf = makePdf([[{ lines: [LOREM] }]]).toString('latin1');
    const content = /<< \/Length (\d+) >>\nstream\n([\s\S]*?)\nendstream/.exec(pdf)!;
    const squeezed = brotliCompressSync(Buffer.from(content[2]!, 'latin1')).toString('latin1');
    const brotli = pdf.replace(content[0], `<< /Length ${squeezed.length} /Filter /BrotliDecode >>\nstream\n${squeezed}\nendstream`);
    const doc = await parsePdf(Buffer.from(brotli, 'latin1'));
    expect(doc.blocks).toEqual([]);
    expect(doc.warnings).toContain('the PDF is compressed with Brotli (/BrotliDecode, new in PDF 2.0), which docsearch cannot read yet');
    // Cut before its cross-reference table, with no catalog to find: a file pdf.js cannot open at all.
    const cut = brotli.slice(0, brotli.indexOf('xref')).replace('/Type /Catalog', '/Type /Catalogue');
    expect((await failure(parsePdf(Buffer.from(cut, 'latin1')))).message).toBe('the PDF is compressed with Brotli (/BrotliDecode, new in PDF 2.0), which docsearch cannot read yet');
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
    // A part that lies about its size, whatever its name: mammoth's JSZip would inflate it whole first and then say
    // "damaged (Bug : uncompressed data size mismatch)".
    const spaces = Buffer.alloc(8 * 1024 * 1024, 0x20);
    const liar = makeZip({
      '_rels/.rels': '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/main.bin"/></Relationships>',
      'word/document.xml': '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>',
      'word/main.bin': { deflated: deflateRawSync(spaces), crc: crc32(spaces), declaredSize: 100 },
    });
    expect((await failure(parseDocx(liar))).message).toBe('the Word document is damaged or truncated (a part inflates past the size the archive gives it — a possible zip bomb)');
  });

  it('warns when a document has no text', async () => {
    const doc = await parseDocx(makeDocx(''));
    expect(doc.blocks).toEqual([]);
    expect(doc.warnings).toEqual(['no text found (empty document?)']);
  });
});

/**
 * The bounds docs/ingest.md ("Formats") gives their own message: RTF groups deeper than 1,000, images of more than 500
 * pages. (The other bounds are in test/ingest/formats/hostile-files.ts, through the daemon.)
 */
describe('RTF and image bounds', () => {
  it('reads RTF nested 1,000 groups deep, and refuses one group deeper', async () => {
    const nested = (depth: number) => Buffer.from(`{\\rtf1\\ansi ${'{'.repeat(depth - 1)}deep words\\par ${'}'.repeat(depth - 1)}}`, 'latin1');
    expect((await parseRtf(nested(1_000))).blocks.map((b) => b.text)).toEqual(['deep words']);
    expect((await failure(parseRtf(nested(1_001)))).message).toBe('the RTF document nests groups more than 1000 deep — refused (a hostile or broken file)');
    // A million: refused as quickly, not a stack overflow.
    expect((await failure(parseRtf(nested(1_000_000)))).message).toMatch(/nests groups more than 1000 deep/);
  });

  it('reads a multi-page TIFF page by page, and refuses one of more than 500 pages', async () => {
    const three = await parseImage(tiff(3), { type: 'image/tiff' });
    expect(three).toMatchObject({ pages: 3, ocrPages: [1, 2, 3], blocks: [] });
    expect((await parseImage(tiff(500), { type: 'image/tiff' })).pages).toBe(500);
    expect((await failure(parseImage(tiff(501), { type: 'image/tiff' }))).message).toBe('the TIFF image has 501 pages — more than 500');
  });
});

/** A little-endian TIFF of `pages` 1 × 1 8-bit gray pages, every page's one strip the same byte. */
function tiff(pages: number): Buffer {
  const tags: [tag: number, value: number][] = [[256, 1], [257, 1], [258, 8], [259, 1], [262, 1], [273, 8], [277, 1], [278, 1], [279, 1]];
  const ifdSize = 2 + tags.length * 12 + 4;
  const out = Buffer.alloc(8 + 4 + pages * ifdSize);
  out.write('II', 0, 'latin1');
  out.writeUInt16LE(42, 2);
  out.writeUInt32LE(12, 4);
  out[8] = 0x80; // the pixel
  for (let p = 0; p < pages; p++) {
    const at = 12 + p * ifdSize;
    out.writeUInt16LE(tags.length, at);
    tags.forEach(([tag, value], i) => {
      const e = at + 2 + i * 12;
      out.writeUInt16LE(tag, e);
      out.writeUInt16LE(tag === 273 || tag === 279 ? 4 : 3, e + 2); // LONG for the strip's offset and size, SHORT else
      out.writeUInt32LE(1, e + 4);
      if (tag === 273 || tag === 279) out.writeUInt32LE(value, e + 8);
      else out.writeUInt16LE(value, e + 8);
    });
    out.writeUInt32LE(p + 1 < pages ? at + ifdSize : 0, at + 2 + tags.length * 12);
  }
  return out;
}

describe('E-mail parser', () => {
  it('makes at most 100 attachments documents and names the rest in its warning (docs/ingest.md, Formats)', async () => {
    const part = (i: number) => `--B\nContent-Type: text/plain; name="a${i}.txt"\nContent-Disposition: attachment; filename="a${i}.txt"\n\nattachment number ${i}\n`;
    const eml = `From: a@example.org\nSubject: many\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\nThe body.\n${Array.from({ length: 103 }, (_, i) => part(i + 1)).join('')}--B--\n`;
    const doc = await parseEmail(Buffer.from(eml));
    expect(doc.attachments?.map((a) => a.filename)).toEqual(Array.from({ length: 100 }, (_, i) => `a${i + 1}.txt`));
    expect(Buffer.from(doc.attachments![99]!.bytes).toString().trim()).toBe('attachment number 100');
    expect(doc.warnings).toEqual(['attachments not indexed (not a type docsearch reads, or more than 100): a101.txt, a102.txt, a103.txt']);
  });

  it('names an attachment as an upload is named: 255 characters at most, its extension kept, a second one numbered within them', async () => {
    // 300 emoji: a name cut at 255 UTF-16 units or without its extension would be refused by a rename, or typed as text.
    const long = `${'🛶'.repeat(300)}.txt`;
    const part = (text: string) => `--B\nContent-Type: text/plain; name="${long}"\nContent-Disposition: attachment; filename="${long}"\n\n${text}\n`;
    const eml = `From: a@example.org\nSubject: long\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\nThe body.\n${part('one')}${part('two')}--B--\n`;
    const names = (await parseEmail(Buffer.from(eml))).attachments!.map((a) => a.filename);
    expect(names).toEqual([`${'🛶'.repeat(251)}.txt`, `${'🛶'.repeat(247)} (2).txt`]);
    for (const name of names) expect([...name].length).toBe(255);
  });
});
