/**
 * docs/ingest.md, Upload contract, probed with hostile requests and files (helper-158's probe): a malformed file fails
 * its own document, never the daemon or the other files' documents; a request is taken whole or not at all — a part the
 * multipart reader cannot read is refused, never left out of a 202; a file of exactly --max-upload-mb is taken.
 * Bodies are written byte for byte (fetch's FormData cannot write a broken Content-Disposition).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { nodeRequest } from '../helpers/node-request.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeDocx, prose } from './pipeline/fixtures.js';
import { storedFiles, uploadFiles, waitFor } from './pipeline/helpers.js';

const BOUNDARY = 'probe158';

/** One part: its Content-Disposition header line (or none) and its bytes. */
const part = (disposition: string | null, body: Buffer | string): Buffer =>
  Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\n${disposition === null ? '' : `Content-Disposition: ${disposition}\r\n`}Content-Type: text/plain\r\n\r\n`),
    Buffer.from(body),
    Buffer.from('\r\n'),
  ]);
const form = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);

/** The general-purpose flag's encryption bit set on every entry of a ZIP, as `zip -P` marks them. */
function markEncrypted(zip: Buffer): Buffer {
  const out = Buffer.from(zip);
  for (let i = 0; i + 4 <= out.length; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === 0x04034b50) out.writeUInt16LE(out.readUInt16LE(i + 6) | 1, i + 6);
    else if (sig === 0x02014b50) out.writeUInt16LE(out.readUInt16LE(i + 8) | 1, i + 8);
  }
  return out;
}

describe('hostile uploads', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  }, { args: ['--ocr', 'off', '--max-upload-mb', '1'] });

  const post = async (body: Buffer) => {
    const res = await nodeRequest(`${d.url}/api/v1/upload`, { authorization: `Bearer ${alice.apiKey}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, 'POST', body);
    return { status: res.status, body: JSON.parse(res.body.toString('utf8')) };
  };
  const filenames = async () => (await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey })).body.documents.map((x: { filename: string }) => x.filename);
  const alive = async () => expect((await api(d, '/api/v1/health')).status).toBe(200);

  it('takes a file of exactly --max-upload-mb, and refuses one byte more (413) keeping nothing', async () => {
    const exactly = (fill: string) => {
      const bytes = Buffer.alloc(1024 * 1024, 0x20);
      bytes.write(prose(fill, 3));
      return bytes;
    };
    const at = await uploadFiles(d, alice.apiKey, [{ name: 'at-limit.txt', bytes: exactly('at the limit') }]);
    expect(at.status, JSON.stringify(at.body)).toBe(202);
    expect(at.body.documents[0]).toMatchObject({ filename: 'at-limit.txt', size_bytes: 1024 * 1024 });
    const over = await uploadFiles(d, alice.apiKey, [{ name: 'over-limit.txt', bytes: Buffer.concat([exactly('over the limit'), Buffer.from('x')]) }]);
    expect(over.status).toBe(413);
    expect(over.body.error.message).toBe('"over-limit.txt" is larger than the 1 MiB limit per file');
    expect(await filenames()).toEqual(['at-limit.txt']);
    expect(storedFiles(d.dataDir).temp).toEqual([]);
  }, 60_000);

  it('refuses a request with a part it cannot read (its Content-Disposition, a boundary line with more than the boundary), never answers 202 without it or with a file cut short', async () => {
    const good = part('form-data; name="file"; filename="beside.txt"', prose('beside a broken part', 4));
    const broken = {
      'a filename* in an unknown charset': "form-data; name=\"file\"; filename*=bogus-charset''%E4%F6.txt",
      'a filename* in a charset busboy cannot decode': "form-data; name=\"file\"; filename*=windows-1251''%E4%F6.txt",
      'a filename* with a broken escape': "form-data; name=\"file\"; filename*=UTF-8''%ZZ.txt",
      'an attachment disposition': 'attachment; name="file"; filename="x.txt"',
      'no Content-Disposition': null,
    };
    const refused = /^a part of the form cannot be read \(its Content-Disposition must be form-data with a name/;
    for (const [what, disposition] of Object.entries(broken)) {
      for (const body of [form(good, part(disposition, prose(what, 4))), form(part(disposition, prose(what, 4)), good)]) {
        const res = await post(body);
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.message, what).toMatch(refused);
      }
    }
    // A boundary line with anything after the boundary: busboy reads no part after it (the next file was lost), and
    // inside a file's bytes it ended the file there (stored cut short).
    const padded = Buffer.concat([good, Buffer.from(`--${BOUNDARY} \r\n`), part('form-data; name="file"; filename="after.txt"', prose('after padding', 4)).subarray(`--${BOUNDARY}\r\n`.length)]);
    const inside = part('form-data; name="file"; filename="inside.txt"', `${prose('before the boundary', 4)}\r\n--${BOUNDARY}Z and on\r\n`);
    for (const body of [form(padded), form(inside)]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toMatch(refused);
    }
    expect(await filenames()).not.toContain('beside.txt');
    expect(storedFiles(d.dataDir).temp).toEqual([]);
    // Sent again without the broken part, it is taken.
    const retry = await post(form(good));
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect(await filenames()).toContain('beside.txt');
  }, 60_000);

  it('names a file after its last path segment and refuses names that display as others, whatever the path', async () => {
    const names: [sent: string, stored: string][] = [
      ['../../etc/passwd', 'passwd'],
      ['/etc/shadow.txt', 'shadow.txt'],
      ['C:\\Windows\\win.ini', 'win.ini'],
      ['..', 'upload-1'],
      ['...', '...'],
      ['CON', 'CON'],
      ['NUL.txt', 'NUL.txt'],
      [`${'n'.repeat(1000)}.txt`, `${'n'.repeat(251)}.txt`],
    ];
    for (const [sent, stored] of names) {
      const res = await post(form(part(`form-data; name="file"; filename="${sent.replaceAll('\\', '\\\\')}"`, prose(`named ${sent.slice(0, 20)}`, 4))));
      expect(res.status, sent).toBe(202);
      expect(res.body.documents[0].filename, sent).toBe(stored);
    }
    const rtl = await post(form(part('form-data; name="file"; filename="invoice\u202Efdp.exe"', prose('rtl', 4))));
    expect(rtl.status).toBe(400);
    expect(rtl.body.error.message).toMatch(/its filename must not contain U\+202E/);
    const nul = await post(form(part('form-data; name="file"; filename="a\u0000b.txt"', prose('nul', 4))));
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toMatch(/^malformed multipart body/);
    await alive();
  }, 60_000);

  it('fails an Office file whose ZIP entries are encrypted on its own, saying it is locked with a password', async () => {
    const locked = markEncrypted(makeDocx([{ heading: 'Locked', paragraphs: ['Words behind a password.'] }]));
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'locked.docx', bytes: locked }, { name: 'open.txt', bytes: Buffer.from(prose('next to a locked file', 4)) }], { query: '?wait=true&wait_timeout=60' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [doc, open] = res.body.documents;
    expect(doc).toMatchObject({ filename: 'locked.docx', status: 'failed' });
    expect(doc.error).toBe('the Word document is locked with a password (its parts are encrypted) — not supported: upload a copy saved without the password');
    expect(open).toMatchObject({ filename: 'open.txt', status: 'ready' });
    await alive();
  }, 90_000);
});

describe('a daemon killed while uploads arrive', () => {
  let d: Daemon | undefined;
  let dataDir = '';
  afterAll(async () => {
    if (d) await d.stop();
    if (dataDir) removeDir(dataDir);
  });

  it('keeps every upload it answered 202, and nothing of the one still arriving: no temp file, no original, no document', async () => {
    d = await startDaemon({ args: ['--ocr', 'off'] });
    dataDir = d.dataDir;
    const user = await addUser(d);
    const accepted = await uploadFiles(d, user.apiKey, [0, 1, 2].map((i) => ({ name: `kept-${i}.txt`, bytes: Buffer.from(prose(`kept before the kill ${i}`, 40)) })));
    expect(accepted.status).toBe(202);
    // An upload half sent when the daemon dies: its bytes are in a temp file, nothing of it is accepted yet.
    const url = new URL(`${d.url}/api/v1/upload`);
    const held = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': '10000000' } });
    held.on('error', () => undefined); // the daemon's death ends it
    held.write(part('form-data; name="file"; filename="half.txt"', prose('half sent', 400)).subarray(0, 20_000));
    await waitFor(() => storedFiles(dataDir).temp.length > 0 || undefined, 15_000, 'the half-sent upload in a temp file');
    await d.stop('SIGKILL');
    held.destroy();

    d = await startDaemon({ dataDir, args: ['--ocr', 'off'] });
    const ids = accepted.body.documents.map((x: { id: string }) => x.id).sort();
    const settled = await waitFor(
      async () => {
        const docs = (await api(d!, '/api/v1/documents?limit=100', { token: user.apiKey })).body.documents as { id: string; status: string; sha256: string }[];
        return docs.every((x) => x.status === 'ready' || x.status === 'failed') ? docs : undefined;
      },
      120_000,
      'the accepted documents settled after the restart',
    );
    expect(settled.map((x) => x.id).sort()).toEqual(ids);
    expect(settled.map((x) => x.status)).toEqual(['ready', 'ready', 'ready']);
    const onDisk = storedFiles(dataDir);
    expect(onDisk.temp).toEqual([]);
    expect(onDisk.originals.sort()).toEqual(settled.map((x) => x.sha256).sort());
    // Sent again whole, the interrupted file is taken.
    const again = await uploadFiles(d, user.apiKey, [{ name: 'half.txt', bytes: Buffer.from(prose('half sent', 400)) }]);
    expect(again.status, JSON.stringify(again.body)).toBe(202);
  }, 240_000);
});
