/**
 * What docs/ingest.md's Parsing and Formats promise of each format beyond its marker sentence (formats.test.ts holds
 * that), through the real daemon: small files built here, each holding what the doc names — furigana, tracked
 * changes and imported HTML in Word, the date and boolean cells of a workbook, a million empty rows an ODS writes as
 * one, the comments and notes of an ODT, an EPUB's empty cover page, ARIA landmarks, an HTML-only e-mail, the titles
 * formats carry, a CSV that opens with a blank line — and real PDFs cut off as an interrupted download leaves them,
 * all uploaded at once, then read back as search sees them (`GET /documents/{id}/text`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { makeDocx, makeZip, para } from '../build-fixtures.js';

interface Chunk {
  text: string;
  heading: string | null;
  page_start: number | null;
  page_end: number | null;
}

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"';

/** An OpenDocument file: its `mimetype` entry first, as the specification has it, and its body. */
function odf(mimetype: string, body: string): Buffer {
  return makeZip({
    mimetype,
    'META-INF/manifest.xml': '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
    'content.xml': `<?xml version="1.0"?><office:document-content ${ODF_NS}><office:body>${body}</office:body></office:document-content>`,
  });
}

const cell = (text: string) => `<table:table-cell office:value-type="string"><text:p>${text}</text:p></table:table-cell>`;

/** Word's markup for a word with its reading above it (furigana): the reading in w:rt, the word in w:rubyBase. */
const ruby = (base: string, reading: string) =>
  `<w:r><w:rPr><w:sz w:val="22"/></w:rPr><w:ruby><w:rubyPr><w:hps w:val="11"/></w:rubyPr><w:rt><w:r><w:t>${reading}</w:t></w:r></w:rt>` +
  `<w:rubyBase><w:r><w:rPr><w:sz w:val="22"/></w:rPr><w:t>${base}</w:t></w:r></w:rubyBase></w:ruby></w:r>`;

/** A .docx whose body imports an HTML part (w:altChunk), as Word saves pasted or merged HTML. */
function altChunkDocx(): Buffer {
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return makeZip({
    '[Content_Types].xml':
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="html" ContentType="text/html"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels': `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/_rels/document.xml.rels': `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdA" Type="${rel}/aFChunk" Target="pasted.html"/></Relationships>`,
    'word/document.xml':
      `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="${rel}"><w:body>` +
      `${para('The harbour board met on Monday.')}<w:altChunk r:id="rIdA"/>${para('The meeting closed at noon.')}</w:body></w:document>`,
    'word/pasted.html': '<html><body><p>Dredging the inner basin was approved.</p><table><tr><td>Cost</td><td>40,000</td></tr></table></body></html>',
  });
}

const inlineCell = (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

/** A workbook of one sheet: dates in a built-in (14) and a custom (dd/mm/yyyy) format, a boolean, a shared string. */
function xlsx(): Buffer {
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return makeZip({
    '[Content_Types].xml':
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>',
    'xl/workbook.xml': `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${rel}"><sheets><sheet name="Arrivals" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    'xl/sharedStrings.xml': '<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>Halcyon</t></si></sst>',
    'xl/styles.xml':
      '<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></numFmts>' +
      '<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164" applyNumberFormat="1"/></cellXfs></styleSheet>',
    'xl/worksheets/sheet1.xml':
      '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
      `<row r="1">${inlineCell('A1', 'vessel')}${inlineCell('B1', 'arrived')}${inlineCell('C1', 'cleared')}${inlineCell('D1', 'sailed')}</row>` +
      '<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2" s="1"><v>45000</v></c><c r="C2" t="b"><v>1</v></c><c r="D2" s="2"><v>45001</v></c></row>' +
      '</sheetData></worksheet>',
  });
}

function epub(): Buffer {
  const page = (body: string) => `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>${body}</body></html>`;
  return makeZip({
    mimetype: 'application/epub+zip',
    'META-INF/container.xml':
      '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    'OEBPS/content.opf':
      '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Coastal Tales</dc:title></metadata>' +
      '<manifest><item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/><item id="c1" href="wreck.xhtml" media-type="application/xhtml+xml"/></manifest>' +
      '<spine><itemref idref="cover"/><itemref idref="c1"/></spine></package>',
    'OEBPS/cover.xhtml': page('<img src="cover.jpg" alt=""/>'),
    'OEBPS/wreck.xhtml': page('<h1>The Wreck</h1><p>The brigantine struck the shoal at the turn of the tide.</p>'),
  });
}

/** The first `share` of a PDF of test/fixtures/extract, as an interrupted download leaves it: no trailer, no %%EOF. */
const cut = (name: string, share: number) => {
  const bytes = readFileSync(join(REPO, 'test/fixtures/extract', name));
  return bytes.subarray(0, Math.floor(bytes.length * share));
};

const FILES: Record<string, Buffer> = {
  'furigana.docx': makeDocx(
    para('Directions for the harbour office.') +
      `<w:p><w:r><w:t xml:space="preserve">The ferry leaves </w:t></w:r>${ruby('東京', 'とうきょう')}<w:r><w:t xml:space="preserve"> at nine.</w:t></w:r></w:p>`,
  ),
  'tracked.docx': makeDocx(
    '<w:p><w:r><w:t xml:space="preserve">The quay was </w:t></w:r><w:ins w:id="1" w:author="ed"><w:r><w:t>widened</w:t></w:r></w:ins>' +
      '<w:del w:id="2" w:author="ed"><w:r><w:delText>demolished</w:delText></w:r></w:del><w:r><w:t xml:space="preserve"> last spring.</w:t></w:r></w:p>',
  ),
  'pasted.docx': altChunkDocx(),
  'arrivals.xlsx': xlsx(),
  'tides.ods': odf(
    'application/vnd.oasis.opendocument.spreadsheet',
    `<office:spreadsheet><table:table table:name="Tides"><table:table-row>${cell('port')}${cell('tide')}</table:table-row>` +
      // How LibreOffice writes the empty rest of a sheet: one row, repeated, of one cell repeated across it.
      '<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="16384"/></table:table-row>' +
      `<table:table-row>${cell('Mousehole')}${cell('ebbing')}</table:table-row></table:table></office:spreadsheet>`,
  ),
  'log.odt': odf(
    'application/vnd.oasis.opendocument.text',
    '<office:text><text:h text:outline-level="1">Watch log</text:h>' +
      '<text:p>The navigator checked the chronometer.<office:annotation><dc:creator>Ed</dc:creator><text:p>Reviewer remark about coffee.</text:p></office:annotation>' +
      '<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Chronometer serviced in Falmouth.</text:p></text:note-body></text:note></text:p>' +
      '<text:p>The watch changed at midnight.</text:p></office:text>',
  ),
  'tales.epub': epub(),
  'landmarks.html': Buffer.from(
    '<!doctype html><html><head><title>Almanac</title></head><body><div role="banner">Harbour Trust masthead</div><div role="navigation">Home · Visits</div>' +
      '<h1>Lamps</h1><p>The keeper &amp; his mate trim the wick &eacute;very dusk.</p><div role="contentinfo">Registered charity</div></body></html>',
  ),
  'html-only.eml': Buffer.from(
    'From: Harbour Master <master@port.example>\r\nTo: Pilots <pilots@port.example>\r\nCc: Tugs <tugs@port.example>\r\nSubject: Fog bell\r\n' +
      'Date: Tue, 4 Mar 2025 09:15:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n' +
      '<html><body><p>The fog bell rings &amp; the horn answers.</p><script>var tracker = 1;</script></body></html>\r\n',
  ),
  'toml.md': Buffer.from('+++\ntitle = "Zephyrine"\ndraft = true\n+++\n\n# Boarding\n\nThe pilot climbs the ladder amidships.\n'),
  'memo.rtf': Buffer.from('{\\rtf1\\ansi{\\info{\\title Quarantine}}\\pard\\outlinelevel0 Arrivals\\par\\pard Every vessel flies the yellow flag until cleared.\\par}'),
  'blank-first.csv': Buffer.from('\nvessel;berth;cargo, bulk\nAurora;north;timber\n'),
  // reportlab writes the catalog, the page tree and the pages first, their content after: page 1 survives the cut.
  'reportlab-cut.pdf': cut('reportlab-2col.pdf', 0.8),
  // pdfTeX writes the page tree last, in an object stream: nothing survives.
  'latex-cut.pdf': cut('latex-1col.pdf', 0.8),
};

describe('each promise of Parsing and Formats, past its marker sentence', () => {
  let d: Daemon;
  let alice: TestUser;
  const docs = new Map<string, any>();
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    const res = await uploadFiles(d, alice.apiKey, Object.entries(FILES).map(([name, bytes]) => ({ name, bytes })), { query: '?wait=true&wait_timeout=120' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const doc of res.body.documents) docs.set(doc.filename, doc);
  }, { args: ['--ocr', 'off'], setupTimeoutMs: 180_000 });

  /** The document's chunks as search sees them, after checking it ended ready. */
  async function chunks(name: string): Promise<Chunk[]> {
    const doc = docs.get(name);
    expect(doc, name).toMatchObject({ status: 'ready', error: null });
    const res = await api(d, `/api/v1/documents/${doc.id}/text`, { token: alice.apiKey });
    expect(res.status).toBe(200);
    return res.body.pages.flatMap((p: { chunks: Chunk[] }) => p.chunks);
  }
  const allText = async (name: string) => (await chunks(name)).map((c) => c.text).join('\n');

  it('DOCX: a word with furigana is read as the word, in its sentence, without its reading (it was dropped)', async () => {
    const text = await allText('furigana.docx');
    expect(text).toContain('The ferry leaves 東京 at nine.');
    expect(text).not.toContain('とうきょう');
  });

  it('DOCX: tracked insertions are kept and deletions dropped', async () => {
    const text = await allText('tracked.docx');
    expect(text).toContain('The quay was widened last spring.');
    expect(text).not.toContain('demolished');
  });

  it('DOCX: an imported HTML part (altChunk), which mammoth skips, is read after the body', async () => {
    const text = await allText('pasted.docx');
    const at = ['The meeting closed at noon.', 'Dredging the inner basin was approved.', 'Cost | 40,000'].map((t) => text.indexOf(t));
    expect(at[0]).toBeGreaterThan(-1);
    expect(at).toEqual([...at].sort((a, b) => a - b));
  });

  it('XLSX: rows read "header: value · …", date formats as ISO dates, booleans as TRUE/FALSE, cited by sheet and row', async () => {
    const [row] = await chunks('arrivals.xlsx');
    expect(row!.text).toContain('vessel: Halcyon · arrived: 2023-03-15 · cleared: TRUE · sailed: 2023-03-16');
    expect(row).toMatchObject({ heading: 'Arrivals', page_start: 2, page_end: 2 });
  });

  it('ODS: a million repeated empty rows are never expanded: the row after them is read and cited by its number', async () => {
    const found = (await chunks('tides.ods')).find((c) => c.text.includes('port: Mousehole · tide: ebbing'));
    expect(found).toMatchObject({ page_start: 1_048_002 });
  });

  it('ODT: comments are left out, notes come after the body', async () => {
    const text = await allText('log.odt');
    expect(text).not.toContain('coffee');
    const [body, note] = ['The watch changed at midnight.', 'Chronometer serviced in Falmouth.'].map((s) => text.indexOf(s));
    expect(body).toBeGreaterThan(-1);
    expect(note).toBeGreaterThan(body!);
  });

  it('EPUB: an empty cover page is not a chapter: the first chapter with text is chapter 1, its heading the trail', async () => {
    const [first] = await chunks('tales.epub');
    expect(first).toMatchObject({ heading: 'The Wreck', page_start: 1 });
    expect(first!.text).toContain('The brigantine struck the shoal');
  });

  it('HTML: ARIA banner, navigation and contentinfo are left out; entities are decoded', async () => {
    const text = await allText('landmarks.html');
    expect(text).toContain('The keeper & his mate trim the wick évery dusk.');
    expect(text).not.toMatch(/masthead|Visits|charity/);
  });

  it('E-mail: From/To/Cc/Date open the text; an HTML-only message goes through the HTML path (no script)', async () => {
    const text = await allText('html-only.eml');
    expect(text).toMatch(/^(Fog bell\s+)?From: Harbour Master \(master@port\.example\) · To: Pilots \(pilots@port\.example\) · Cc: Tugs \(tugs@port\.example\) · Date: 2025-03-04/);
    expect(text).toContain('The fog bell rings & the horn answers.');
    expect(text).not.toContain('tracker');
  });

  it('Markdown: TOML front matter is not text', async () => {
    const text = await allText('toml.md');
    expect(text).toContain('The pilot climbs the ladder amidships.');
    expect(text).not.toMatch(/draft|\+\+\+/);
  });

  it('the title a format carries (TOML front matter, <title>, the OPF\'s dc:title, RTF \\info) is not text, but is searched with it', async () => {
    for (const [name, title] of [['toml.md', 'Zephyrine'], ['landmarks.html', 'Almanac'], ['tales.epub', 'Coastal'], ['memo.rtf', 'Quarantine']] as const) {
      expect(await allText(name), name).not.toContain(title);
      const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: title, document_ids: [docs.get(name).id], limit: 3 } });
      expect(res.status, name).toBe(200);
      // Found by its words (BM25 over title + heading path + text), not only by meaning.
      expect(res.body.results[0]?.scores.keyword, `${name}: ${JSON.stringify(res.body.results[0])}`).toBeDefined();
    }
  });

  it('RTF: an \\outlinelevel paragraph is a heading', async () => {
    const [first] = await chunks('memo.rtf');
    expect(first).toMatchObject({ heading: 'Arrivals' });
    expect(first!.text).toContain('Every vessel flies the yellow flag until cleared.');
  });

  it('CSV: a file that opens with a blank line still takes ";" and names the columns by its first filled row (it split on ",")', async () => {
    const [row] = await chunks('blank-first.csv');
    expect(row!.text).toContain('vessel: Aurora · berth: north · cargo, bulk: timber');
    expect(row!.page_start).toBe(3);
  });

  it('PDF: a file that ends early keeps the pages it still holds, and says which were lost (it failed whole)', async () => {
    expect(docs.get('reportlab-cut.pdf')).toMatchObject({
      pages: 3,
      warnings: ['1 page could not be read and was skipped (page 2): the file ends early (an interrupted upload or download?)', '1 of 3 pages have no usable text layer (scanned?): page 3'],
    });
    const [first] = await chunks('reportlab-cut.pdf');
    expect(first).toMatchObject({ page_start: 1 });
    expect(first!.text).toContain('ReportLab');
  });

  it('PDF: one whose every page was cut off fails on its own, saying it ends early', async () => {
    expect(docs.get('latex-cut.pdf')).toMatchObject({ status: 'failed', chunk_count: 0, error: 'the PDF is damaged or truncated: the file ends early (an interrupted upload or download?)' });
  });
});
