/**
 * Odd and hostile inputs through the real upload API of a daemon (dist/) with a 10 s parse limit: each ends as its
 * own document — ready with its text, or failed with a reason a person can act on — quickly, in bounded memory,
 * and the daemon goes on reading the next upload. hostile-files.ts has one bomb per format; these are the inputs
 * found to break a parser (a zip entry lying about its size, lines of 200,000 spaces) and the odd-but-valid ones
 * around them (a file whose name lies, files of only whitespace, broken MIME, a PDF without a usable xref).
 */
import { readFileSync } from 'node:fs';
import { createDeflateRaw, crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { type DeflatedEntry, makeDocx, makePdf, makeZip, para } from '../build-fixtures.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<any> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=120' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.documents[0];
}

async function text(d: Daemon, user: TestUser, id: string): Promise<string> {
  const res = await api(d, `/api/v1/documents/${id}/text`, { token: user.apiKey });
  expect(res.status).toBe(200);
  return JSON.stringify(res.body);
}

/** `mib` MiB of spaces, deflated (about 1 KB a MiB), streamed so the test never holds them. */
async function deflatedSpaces(mib: number): Promise<Omit<DeflatedEntry, 'declaredSize'>> {
  const deflate = createDeflateRaw();
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
    const pid = d.proc.pid!;
    const before = rssMiB(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 25);
    const doc = await upload(d, alice, 'bomb.docx', bomb).finally(() => clearInterval(sampler));
    expect(peak - before, `daemon RSS ${Math.round(before)} → peak ${Math.round(peak)} MiB`).toBeLessThan(300);
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

  it('reads a file by its bytes when its name lies, and refuses what no name makes readable', async () => {
    const docx = await upload(d, alice, 'minutes.pdf', makeDocx(para('The harbour board met on Tuesday.')));
    expect(docx).toMatchObject({ status: 'ready', content_type: DOCX });
    const refused: [string, Buffer, string][] = [
      ['archive.pdf', makeZip({ 'a.txt': 'hello' }), '"archive.pdf" is a ZIP archive that holds no document docsearch reads, or a damaged one (accepted: '],
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
