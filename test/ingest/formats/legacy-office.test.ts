/**
 * Legacy binary Office (.doc, .xls, .ppt, made by LibreOffice in test/fixtures/formats/make.sh) through the real
 * daemon: with LibreOffice installed each is converted, ends ready under its own type, is found by a sentence in
 * it and cites its slide or sheet and rows; health names the converter. With `--libreoffice off`, or with no
 * LibreOffice on the PATH, the upload is refused with a 415 that says why and what to do, and health says so too.
 * An encrypted Office file (an OLE2 container of something else) is refused as such, never taken for a .doc.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acceptedList, hasLibreOffice } from '../../helpers/accepted-types.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { unmet } from '../../helpers/requirement.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';

const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));
const noOffice = unmet(hasLibreOffice() ? null : 'LibreOffice is not installed (Debian: libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui)');
const MARKUP = /<\/?[a-z][^>]*>|&[a-z]+;|\\[a-z]+\d*/i;

const CASES = [
  { file: 'ledger.doc', type: 'application/msword', query: 'purser balances ledger crossing', holds: 'The purser balances the ledger after every crossing.', heading: 'Accounts', citation: undefined },
  { file: 'berths.xls', type: 'application/vnd.ms-excel', query: 'Borealis refrigerated mackerel', holds: 'vessel: Borealis · berth: south · cargo: refrigerated mackerel', heading: 'Berths', citation: { unit: 'row', sheet: 'Berths', start: 2, end: 3 } },
  { file: 'signal.ppt', type: 'application/vnd.ms-powerpoint', query: 'lower lifeboats captain signal', holds: 'Lower the lifeboats once the captain gives the signal.', heading: 'Abandon ship', citation: { unit: 'slide', start: 3, end: 3 } },
];

/** An OLE2 container as Word writes around a password-protected .docx: an `EncryptedPackage` stream, no WordDocument. */
function encryptedOoxml(): Buffer {
  const file = Buffer.alloc(1536);
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(file);
  const entry = 512 + 128;
  const name = Buffer.from('EncryptedPackage\0', 'utf16le');
  name.copy(file, entry);
  file.writeUInt16LE(name.length, entry + 64);
  file[entry + 66] = 2;
  return file;
}

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer) {
  return uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=300' });
}

describe.skipIf(noOffice)(`legacy Office converted by LibreOffice${noOffice ? ` (skipped: ${noOffice})` : ''}`, () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('health names the converter', async () => {
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.legacy_office).toMatchObject({ status: 'up', converter: expect.stringMatching(/^LibreOffice \d+\.\d+/) });
  });

  it('converts .doc, .xls and .ppt, finds them by a sentence and cites the slide or the sheet and rows', async () => {
    for (const c of CASES) {
      const res = await upload(d, alice, c.file, fixture(c.file));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.documents[0], c.file).toMatchObject({ status: 'ready', content_type: c.type, error: null });
    }
    for (const c of CASES) {
      const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: c.query, limit: 5 } });
      const hit = res.body.results.find((r: any) => r.document.filename === c.file && r.text.includes(c.holds));
      expect(hit, `${c.file}: ${JSON.stringify(res.body.results.map((r: any) => [r.document.filename, r.text]))}`).toBeDefined();
      expect(hit.text).not.toMatch(MARKUP);
      expect(hit.heading).toBe(c.heading);
      if (c.citation) expect(hit.citation).toMatchObject(c.citation);
      else expect(hit.citation).toBeUndefined();
    }
  }, 300_000);

  it('refuses an encrypted Office file as what it is, and fails a damaged .doc on its own', async () => {
    const encrypted = await upload(d, alice, 'secret.docx', encryptedOoxml());
    expect(encrypted.status).toBe(415);
    // The list of what is accepted names legacy Office, as this server converts it.
    expect(encrypted.body.error.message).toBe(`"secret.docx" is an encrypted Office file or another kind of OLE2 file — not supported (accepted: ${acceptedList(true)})`);
    const doc = fixture('ledger.doc');
    // The directory (which names the WordDocument stream) kept, the stream itself overwritten.
    const damaged = Buffer.from(doc);
    damaged.fill(0xff, 512, 512 + 4096);
    const res = await upload(d, alice, 'damaged.doc', damaged);
    expect(res.status).toBe(200);
    const failed = res.body.documents[0];
    expect(failed.status, JSON.stringify(failed)).toBe('failed');
    expect(failed.error).toMatch(/^the Word 97–2003 document \(\.doc\) could not be converted/);
  }, 120_000);
});

describe('legacy Office switched off', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    { args: ['--libreoffice', 'off'] },
  );

  it('refuses a .doc with a 415 that says conversion is off, and health says so', async () => {
    const res = await upload(d, alice, 'ledger.doc', fixture('ledger.doc'));
    expect(res.status).toBe(415);
    expect(res.body.error.message).toBe('"ledger.doc" is a Word 97–2003 document (.doc), which this server cannot read: converting it with LibreOffice is switched off (--libreoffice off) — or save it as .docx');
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.legacy_office).toEqual({ status: 'up', converter: null, reason: 'off (--libreoffice off)' });
    // Nor does the list of what is accepted name it.
    const other = await upload(d, alice, 'program.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]));
    expect(other.body.error.message).toBe(`"program.bin" is not a type docsearch reads (accepted: ${acceptedList(false)})`);
  });
});

describe('legacy Office without LibreOffice installed', () => {
  // A PATH that holds node and nothing else: no soffice to find.
  const bin = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    { env: { PATH: bin }, args: ['--ocr', 'off'] },
  );

  it('refuses a .ppt with a 415 that says what to install', async () => {
    const res = await upload(d, alice, 'signal.ppt', fixture('signal.ppt'));
    expect(res.status).toBe(415);
    expect(res.body.error.message).toBe(
      '"signal.ppt" is a PowerPoint 97–2003 presentation (.ppt), which this server cannot read: it needs LibreOffice, which is not installed (Debian: libreoffice-writer-nogui, libreoffice-calc-nogui and libreoffice-impress-nogui) — or save it as .pptx',
    );
  });
});
