/**
 * Odd and hostile inputs through the real upload API of a daemon (dist/) with a 10 s parse limit: each ends as its
 * own document — ready with its text, or failed with a reason a person can act on — quickly, in bounded memory,
 * and the daemon goes on reading the next upload. hostile-files.ts has one bomb per format; these are the inputs
 * found to break a parser (a zip entry lying about its size, lines of 200,000 spaces, Markdown nested 100,000 deep,
 * a PDF page tree that loops, table cells that each looked back over the whole text) and the odd-but-valid ones
 * around them (a file whose name lies, files of only whitespace, broken MIME, a PDF without a usable xref).
 */
import { readFileSync } from 'node:fs';
import { constants, createDeflateRaw, crc32, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { rssSampler } from '../../helpers/rss-sampler.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { type DeflatedEntry, makeDocx, makePdf, makeZip, para } from '../build-fixtures.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<any> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=120' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.documents[0];
}

/**
 * `pdf` with `objects` replaced by an incremental update (new versions of the objects, an xref section for them and
 * a trailer pointing back to the previous one), as a PDF editor saves a change. `compressed`: the objects in a
 * Flate object stream and the section a cross-reference stream, as PDF 1.5 writers save them (qpdf
 * --object-streams=generate).
 */
function withObjects(pdf: Buffer, objects: Record<number, string>, compressed = false): Buffer {
  const original = pdf.toString('latin1');
  const prev = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(original)![1];
  const trailer = /trailer\s*<<([\s\S]*?)>>\s*startxref/.exec(original)![1]!;
  let out = original.endsWith('\n') ? original : `${original}\n`;
  const size = Math.max(Number(/\/Size\s+(\d+)/.exec(trailer)![1]), ...Object.keys(objects).map((n) => Number(n) + 1));
  const kept = trailer.replace(/\/(Size|Prev)\s+\d+/g, '');
  if (!compressed) {
    let xref = 'xref\n';
    for (const [num, body] of Object.entries(objects)) {
      xref += `${num} 1\n${String(out.length).padStart(10, '0')} 00000 n \n`;
      out += `${num} 0 obj\n${body}\nendobj\n`;
    }
    return Buffer.from(`${out}${xref}trailer\n<<${kept} /Size ${size} /Prev ${prev} >>\nstartxref\n${out.length}\n%%EOF\n`, 'latin1');
  }
  const [stream, xrefStream] = [size, size + 1];
  let header = '';
  let bodies = '';
  for (const [num, body] of Object.entries(objects)) {
    header += `${num} ${bodies.length} `;
    bodies += `${body}\n`;
  }
  const data = deflateSync(Buffer.from(header + bodies, 'latin1')).toString('latin1');
  // Cross-reference stream rows: type 2 (in object stream `stream`, at its index) or 1 (at an offset), 1 + 4 + 2 bytes.
  const rows: [num: number, type: number, field: number, index: number][] = Object.keys(objects).map((num, i) => [Number(num), 2, stream, i]);
  rows.push([stream, 1, out.length, 0]);
  out += `${stream} 0 obj\n<< /Type /ObjStm /N ${rows.length - 1} /First ${header.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n${data}\nendstream\nendobj\n`;
  rows.push([xrefStream, 1, out.length, 0]);
  const table = Buffer.concat(
    rows.map(([, type, field, index]) => {
      const row = Buffer.alloc(7, type);
      row.writeUInt32BE(field, 1);
      row.writeUInt16BE(index, 5);
      return row;
    }),
  ).toString('latin1');
  const index = rows.map(([num]) => `${num} 1`).join(' ');
  return Buffer.from(
    `${out}${xrefStream} 0 obj\n<<${kept} /Type /XRef /Size ${xrefStream + 1} /Prev ${prev} /W [1 4 2] /Index [${index}] /Length ${table.length} >>\nstream\n${table}\nendstream\nendobj\nstartxref\n${out.length}\n%%EOF\n`,
    'latin1',
  );
}

async function text(d: Daemon, user: TestUser, id: string): Promise<string> {
  const res = await api(d, `/api/v1/documents/${id}/text`, { token: user.apiKey });
  expect(res.status).toBe(200);
  return JSON.stringify(res.body);
}

/** `mib` MiB of spaces, deflated (about 1 KB a MiB), streamed so the test never holds them. */
async function deflatedSpaces(mib: number): Promise<Omit<DeflatedEntry, 'declaredSize'>> {
  // Run-length matching only: as small as the default strategy's output (~1 KB a MiB), in a fifth of its time.
  const deflate = createDeflateRaw({ strategy: constants.Z_RLE });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  let crc = 0;
  for (let i = 0; i < mib; i++) {
    crc = crc32(chunk, crc);
    if (!deflate.write(chunk)) await new Promise((r) => deflate.once('drain', r));
  }
  await new Promise((r) => deflate.end(r));
  return { deflated: Buffer.concat(out), crc };
}

describe('odd and hostile inputs through the daemon', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    { args: ['--parse-timeout', '10'] },
  );

  it('fails a Word document whose part inflates to 1 GiB past the size it declares, without the memory', async () => {
    // The main part is named by the package's relationships, not by its extension: mammoth's JSZip inflated this
    // ".bin" whole (3 GB of daemon memory for a 3 MB file) and only then noticed the size was wrong.
    const bomb = makeZip({
      '_rels/.rels': '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/main.bin"/></Relationships>',
      'word/document.xml': '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>',
      'word/main.bin': { ...(await deflatedSpaces(1024)), declaredSize: 1000 },
    });
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const sampler = rssSampler(d.proc.pid!);
    const doc = await upload(d, alice, 'bomb.docx', bomb);
    const { before, peak } = sampler.stop();
    expect(peak - before, `daemon RSS ${before} → peak ${peak} MiB`).toBeLessThan(300);
    expect(doc).toMatchObject({ status: 'failed', content_type: DOCX });
    expect(doc.error).toBe('the Word document is damaged or truncated (a part inflates past the size the archive gives it — a possible zip bomb)');
    // The same package with an honest main part is read: relationships that name a non-.xml part still work.
    const honest = makeZip({
      '_rels/.rels': '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/main.bin"/></Relationships>',
      'word/document.xml': '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>',
      'word/main.bin': `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${para('The lock gates open at the turn of the tide.')}</w:body></w:document>`,
    });
    const ok = await upload(d, alice, 'renamed-part.docx', honest);
    expect(ok).toMatchObject({ status: 'ready', content_type: DOCX });
    expect(await text(d, alice, ok.id)).toContain('The lock gates open at the turn of the tide.');
  }, 120_000);

  it('reads lines of 200,000 spaces or no-break spaces within the parse limit (they backtracked for minutes)', async () => {
    const padded = await upload(d, alice, 'padded.txt', Buffer.from(`# Padded heading${' '.repeat(200_000)}end\n\nword${' '.repeat(200_000)}tail\n`));
    expect(padded, padded.error).toMatchObject({ status: 'ready', error: null });
    const body = await text(d, alice, padded.id);
    expect(body).toMatch(/Padded heading +end/);
    expect(body).toMatch(/word +tail/);
    const page = await upload(d, alice, 'spacer.html', Buffer.from(`<html><body><p>spacer${'\u00a0'.repeat(200_000)}gif</p></body></html>`));
    expect(page, page.error).toMatchObject({ status: 'ready', content_type: 'text/html', error: null });
    expect(await text(d, alice, page.id)).toMatch(/spacer(\u00a0)+gif/);
  }, 120_000);

  it('keeps answering while it chunks a text file of one 1 MB base64 line (its tokenising held the main thread)', async () => {
    // Base64 tokenises at ~8 µs a character, several times over while a block too long for a chunk is split: split
    // whole, 1 MB held the daemon's only JavaScript thread for seconds at a time (3–5 s measured), and no request was answered meanwhile.
    const blob = Buffer.from(Array.from({ length: 750_000 }, (_, i) => (i * 7919 + (i >> 7)) % 256)).toString('base64');
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'blob.txt', bytes: Buffer.from(`An attachment, encoded:\n\n${blob}\n`) }]);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.documents[0].id as string;
    let slowest = 0;
    let processing = 0;
    const until = Date.now() + 25_000;
    while (Date.now() < until) {
      const started = performance.now();
      const doc = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey });
      slowest = Math.max(slowest, performance.now() - started);
      expect(doc.status).toBe(200);
      if (doc.body.status === 'processing') processing++;
      if (doc.body.status === 'ready' || doc.body.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(processing, 'the document was seen being processed').toBeGreaterThan(0);
    expect(slowest, `the slowest answer while it was chunked took ${Math.round(slowest)} ms`).toBeLessThan(1000);
    // Not left to embed its thousand chunks behind the next tests.
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
  }, 60_000);

  it('reads Markdown nested 100,000 deep or packed with delimiters as plain text within the parse limit', async () => {
    // micromark's cost grows with the square of the nesting and of a paragraph's delimiters: files nested or packed
    // like these held a parse slot until the limit (10 s here, 50 s by default) and failed, while the uploads behind
    // it waited. The delimiter files are a few times past the guard's bound (MAX_DELIMITER_WORK), no more: read as
    // plain text, every delimiter is text the model embeds (25,000 `[a](` were 800 chunks, 20 s on 2 cores).
    const hostile: [name: string, body: string, note: RegExp, sentence: string][] = [
      ['quotes.md', `${'>'.repeat(100_000)} The tide gauge at the quay reads four metres.\n`, /more than 100 deep/, 'The tide gauge at the quay reads four metres.'],
      ['items.md', `${'- '.repeat(50_000)}The dredger works the channel at night.\n`, /more than 100 deep/, 'The dredger works the channel at night.'],
      ['stars.md', `# Birds\n\n${'*'.repeat(10_000)} Gulls follow the trawler home. ${'*'.repeat(10_000)}\n`, /too many emphasis, link or code delimiters/, 'Gulls follow the trawler home.'],
      ['links.md', `${'[a]('.repeat(12_500)}\n\nThe harbour light turns every ten seconds.\n`, /too many emphasis, link or code delimiters/, 'The harbour light turns every ten seconds.'],
    ];
    const docs = await Promise.all(hostile.map(([name, body]) => upload(d, alice, name, Buffer.from(body))));
    for (const [doc, [name, , note, sentence]] of docs.map((doc, i) => [doc, hostile[i]!] as const)) {
      expect(doc, `${name}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: 'text/markdown', error: null });
      expect(doc.warnings, name).toEqual([expect.stringMatching(/^the Markdown was read as plain text: /)]);
      expect(doc.warnings[0], name).toMatch(note);
      const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: sentence, limit: 3 } });
      const hit = res.body.results.find((r: any) => r.document.id === doc.id);
      expect(hit?.text, `${name}: ${JSON.stringify(res.body).slice(0, 500)}`).toContain(sentence);
      // The markers that nested it are gone from its text; the words are all there.
      if (name === 'quotes.md') expect(hit.text).toBe(sentence);
    }
  }, 120_000);

  it('reads a 20,000-line list with sublists as Markdown within the parse limit (it took 39 s)', async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `- berth ${i}\n  - vessel ${i}\n`).join('');
    const doc = await upload(d, alice, 'berths.md', Buffer.from(`# Berth list\n\n${lines}\nThe list ends with the harbour office.\n`));
    expect(doc, doc.error).toMatchObject({ status: 'ready', content_type: 'text/markdown', error: null, warnings: [] });
    const first = await text(d, alice, doc.id);
    expect(first).toContain('berth 0\\n\\nvessel 0\\n\\nberth 1');
    expect(first).not.toMatch(/- (berth|vessel)/);
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'list ends harbour office', limit: 3 } });
    const hit = res.body.results.find((r: any) => r.document.id === doc.id);
    expect(hit?.text, JSON.stringify(res.body).slice(0, 500)).toMatch(/vessel 9999\n\nThe list ends with the harbour office\.$/);
  }, 120_000);

  it('reads each page of a PDF whose page tree loops once, in order, on its own page (pages were lost)', async () => {
    // groff's three pages, as its root /Pages (object 2) lists them: objects 3, 12 and 14; fonts inherited from it.
    const gpl = readFileSync(join(REPO, 'test/fixtures/extract/groff-gropdf.pdf'));
    const pages = (kids: string, count: number, parent = '') =>
      `<< /Type /Pages /Count ${count} /Kids [${kids}] ${parent}/MediaBox [0 0 595 842] /Resources << /Font << /F36 5 0 R /F5 9 0 R >> /ProcSet [/PDF /Text] >> >>`;
    const trees: Record<string, Record<number, string>> = {
      // A section (17) holding page 1 lists the root among its kids: page 1 was skipped.
      'section-loop': { 2: pages('17 0 R 12 0 R 14 0 R', 3), 17: pages('2 0 R 3 0 R', 1, '/Parent 2 0 R ') },
      // The root lists itself after page 1: pages 2 and 3 were lost, and the document said it had 2.
      'self-loop': { 2: pages('3 0 R 2 0 R 12 0 R 14 0 R', 3) },
      // ... or before page 1: the whole document failed.
      'first-loop': { 2: pages('2 0 R 3 0 R 12 0 R 14 0 R', 3) },
    };
    // Each as plain objects, and in an object stream with the catalog (1), where they cannot be blanked in place:
    // there the same pages were lost, and first-loop failed.
    const catalog = '<< /Type /Catalog /Pages 2 0 R >>';
    const loops: Record<string, Buffer> = Object.fromEntries(
      Object.entries(trees).flatMap(([name, objects]) => [
        [`${name}.pdf`, withObjects(gpl, objects)],
        [`${name}-objstm.pdf`, withObjects(gpl, { 1: catalog, ...objects }, true)],
      ]),
    );
    const onPage = [
      [1, 'The GNU General Public License, an excerpt'],
      [2, 'To \\"propagate\\" a work means to do anything with it'],
      [3, 'Conveying under any other circumstances is permitted solely'],
    ] as const;
    for (const [name, bytes] of Object.entries(loops)) {
      const doc = await upload(d, alice, name, bytes);
      expect(doc, `${name}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: 'application/pdf', pages: 3, error: null });
      expect(doc.warnings, name).toEqual(['its page tree loops back on itself: each page it lists was read once, in order']);
      const res = await api(d, `/api/v1/documents/${doc.id}/text`, { token: alice.apiKey });
      expect(res.body.pages.map((p: any) => p.page), name).toEqual([1, 2, 3]);
      for (const [page, words] of onPage) {
        const chunks = res.body.pages.flatMap((p: any) => p.chunks).filter((c: any) => JSON.stringify(c.text).includes(words));
        expect(chunks.length, `${name}: "${words}"`).toBeGreaterThan(0);
        for (const c of chunks) expect([c.page_start, c.page_end], `${name}: "${words}"`).toSatisfy(([a, b]: number[]) => a! <= page && page <= b!);
      }
    }
    const hit = (await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'convey covered work aggregate other parts', limit: 10 } })).body.results.find(
      (r: any) => r.document.filename === 'section-loop.pdf',
    );
    expect(hit?.citation).toMatchObject({ unit: 'page', start: 3, end: 3 });
  }, 120_000);

  it('reads a long list after a code block or comment left open in a list item within the parse limit (one piece: a minute)', async () => {
    // The block ends with its list item, but the pieces waited for its closing line, and read the rest as one.
    const lines = Array.from({ length: 5_000 }, (_, i) => `- berth ${i}\n  - vessel ${i}\n`).join('');
    const files = { 'open-fence.md': '- Berths\n  ```\n  berth = vessel\n', 'open-comment.md': '- Berths\n  <!-- berth = vessel\n' };
    const docs = await Promise.all(Object.entries(files).map(([name, open]) => upload(d, alice, name, Buffer.from(`${open}\nThe list follows.\n\n${lines}\nThe list ends with the lock keeper.\n`))));
    for (const doc of docs) {
      expect(doc, `${doc.filename}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: 'text/markdown', error: null });
      const body = await text(d, alice, doc.id);
      expect(body, doc.filename).toContain('The list follows.');
      expect(body, doc.filename).toContain('berth 0\\n\\nvessel 0\\n\\nberth 1');
      const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'list ends lock keeper', limit: 10 } });
      const hit = res.body.results.find((r: any) => r.document.id === doc.id);
      expect(hit?.text, `${doc.filename}: ${JSON.stringify(res.body).slice(0, 500)}`).toMatch(/vessel 4999\n\nThe list ends with the lock keeper\.$/);
    }
  }, 120_000);

  it('reads 2 MB of blank table cells in HTML or empty rows in RTF within the parse limit (each looked back over the text)', async () => {
    // Each cell asked whether the text so far had any (HTML: a trim of it), each row cut a trailing separator (RTF:
    // a regex on it): 2 MB of blank cells took 38 s in HTML, 2.5 MB of empty rows about 20 s in RTF.
    const blank = ' '.repeat(100);
    const sentence = 'The harbour office keeps the tide tables.';
    const files: [string, string, string][] = [
      ['cells.html', 'text/html', `<!DOCTYPE html><html><body><table><tr>${`<td>${blank}`.repeat(20_000)}<td>${sentence}</table>`],
      ['cells.rtf', 'application/rtf', `{\\rtf1 ${`\\intbl\\row${blank}`.repeat(25_000)}${sentence}\\par}`],
    ];
    for (const [name, type, body] of files) {
      const doc = await upload(d, alice, name, Buffer.from(body, 'latin1'));
      expect(doc, `${name}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: type, error: null });
      expect(await text(d, alice, doc.id), name).toContain(sentence);
    }
  }, 120_000);

  it('reads a file by its bytes when its name lies, and refuses what no name makes readable', async () => {
    const docx = await upload(d, alice, 'minutes.pdf', makeDocx(para('The harbour board met on Tuesday.')));
    expect(docx).toMatchObject({ status: 'ready', content_type: DOCX });
    const refused: [string, Buffer, string][] = [
      ['archive.pdf', makeZip({ 'a.txt': 'hello' }), '"archive.pdf" is a ZIP archive of 1 file ("a.txt"), not the parts of a DOCX, XLSX, PPTX, ODF or EPUB document: docsearch does not unpack archives, upload the files in it instead (accepted: '],
      ['notes.txt', Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256)), '"notes.txt" is not a type docsearch reads (accepted: '],
      ['empty.md', Buffer.alloc(0), '"empty.md" is empty (accepted: '],
    ];
    for (const [name, bytes, message] of refused) {
      const res = await uploadFiles(d, alice.apiKey, [{ name, bytes }]);
      expect(res.status, name).toBe(415);
      expect(res.body.error.message.startsWith(message), res.body.error.message).toBe(true);
    }
  }, 60_000);

  it('reads Chinese UTF-16 without a byte order mark (it was refused as "not a type docsearch reads")', async () => {
    const chinese = '港口的领航员在黎明时登上每一艘油轮。\n东京是日本的首都，也是世界上人口最多的城市之一。\n';
    const bytes = Buffer.from(chinese.repeat(4), 'utf16le');
    const doc = await upload(d, alice, 'harbour.txt', bytes);
    expect(doc).toMatchObject({ status: 'ready', content_type: 'text/plain', error: null });
    expect(await text(d, alice, doc.id)).toContain('港口的领航员在黎明时登上每一艘油轮。');
  }, 60_000);

  it('takes a file of only whitespace, whatever its name, as text with none: ready, no chunks, a warning', async () => {
    for (const name of ['blank.txt', 'blank.md', 'blank.csv', 'blank.html', 'blank.eml', 'blank.docx', 'blank.pdf']) {
      const doc = await upload(d, alice, name, Buffer.from('   \n\n\t  \r\n'));
      expect(doc, name).toMatchObject({ status: 'ready', chunk_count: 0, error: null });
      expect(doc.warnings, name).toEqual(['no text found (empty file?)']);
    }
    const page = await upload(d, alice, 'blank-page.html', Buffer.from('<html><body> \n </body></html>'));
    expect(page).toMatchObject({ status: 'ready', content_type: 'text/html', chunk_count: 0, warnings: ['no text found (empty page?)'] });
  }, 60_000);

  it('reads e-mail with broken MIME and encoded words in odd or unknown charsets, and refuses nesting past 50', async () => {
    const head = (ct: string, subject = 'odd') => `From: a@example.org\nSubject: ${subject}\nMIME-Version: 1.0\nContent-Type: ${ct}\n\n`;
    const broken = await upload(d, alice, 'broken.eml', Buffer.from(`${head('multipart/mixed; boundary="XX"')}--XX\nContent-Type: text/plain\n\nThe pilot boat waits at the breakwater.\n--YY\n`));
    expect(broken).toMatchObject({ status: 'ready', content_type: 'message/rfc822' });
    expect(await text(d, alice, broken.id)).toContain('The pilot boat waits at the breakwater.');
    const encoded = await upload(
      d,
      alice,
      'encoded.eml',
      Buffer.from(head('text/plain', '=?ISO-2022-JP?B?GyRCJUYlOSVIGyhC?= =?koi8-r?B?8NLJ18XU?= =?x-unknown?Q?odd?= =?utf-8?B?####?=') + 'Body words.\n'),
    );
    // Adjacent encoded words join without the space between them (RFC 2047 §6.2); one of broken base64 is dropped.
    expect(encoded).toMatchObject({ status: 'ready', metadata: { email: { subject: 'テストПриветodd' } } });
    const nested = Array.from({ length: 60 }, (_, i) => `--B${i}\nContent-Type: multipart/mixed; boundary="B${i + 1}"\n\n`).join('');
    const deep = await upload(d, alice, 'deep.eml', Buffer.from(`${head('multipart/mixed; boundary="B0"')}${nested}--B60\nContent-Type: text/plain\n\ndeep\n`));
    expect(deep).toMatchObject({ status: 'failed', error: 'the e-mail could not be read: Maximum MIME nesting depth of 50 levels exceeded' });
  }, 60_000);

  it('reads a PDF whose xref points nowhere (rebuilt from its objects), and fails a Word table nested 20,000 deep on its own', async () => {
    const pdf = makePdf([[{ lines: ['The ferry timetable changes in October.'] }]]).toString('latin1');
    const broken = pdf.replace(/startxref\n\d+/, 'startxref\n999999');
    const doc = await upload(d, alice, 'moved-xref.pdf', Buffer.from(broken, 'latin1'));
    expect(doc, doc.error).toMatchObject({ status: 'ready', content_type: 'application/pdf' });
    expect(await text(d, alice, doc.id)).toContain('The ferry timetable changes in October.');
    const deep = await upload(d, alice, 'deep.docx', makeDocx('<w:tbl><w:tr><w:tc>'.repeat(20_000) + para('cell') + '</w:tc></w:tr></w:tbl>'.repeat(20_000)));
    expect(deep).toMatchObject({ status: 'failed', error: 'the Word document nests tables or other elements too deep to read — refused (a hostile or broken file)' });
    const after = await upload(d, alice, 'after.txt', Buffer.from('The daemon still reads plain words after the odd files.\n'));
    expect(after.status).toBe('ready');
    expect((await api(d, '/api/v1/health')).status).toBe(200);
  }, 120_000);
});
