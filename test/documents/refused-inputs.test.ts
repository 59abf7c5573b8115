/**
 * Inputs that came out wrong instead of refused, through a real daemon over HTTP:
 * - the upload's `labels` field in a form docs/api.md does not describe (a JSON object, `null`, `true`, a JSON
 *   string, numbers, an empty name, 10 KB, 10,000 names) was stored as label names, or refused without naming the
 *   field in `details`: each is a 400 naming `labels`, nothing stored; the documented forms still work;
 * - a document's name with characters a person cannot see (U+200B, U+FEFF, the soft hyphen, tag characters), line
 *   or paragraph separators was taken, on upload and on rename; the joiners and variation selectors emoji and
 *   Persian are written with still pass (core/unsafe-text.ts);
 * - a ZIP of 50,000 entries, one of folders only and one of plain files were all "a ZIP archive that holds no
 *   document docsearch reads, or a damaged one": each now says which.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeZip } from '../ingest/build-fixtures.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { storedFiles, uploadFiles } from '../ingest/pipeline/helpers.js';

describe('inputs refused rather than taken wrong', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  }, { args: ['--ocr', 'off'] });

  const documents = async () => (await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey })).body.documents as { id: string; filename: string; labels: string[] }[];
  let n = 0;
  const file = (name = `note-${++n}.txt`) => ({ name, bytes: Buffer.from(prose(`refused inputs ${++n}`, 3)) });

  it('refuses a labels field in a form the docs do not describe, naming the field, and stores nothing', async () => {
    const before = await documents();
    const forms: [string, RegExp][] = [
      ['{"a":1}', /^labels: must be label names separated by commas, or a JSON array of label names, not a JSON object$/],
      ['{}', /not a JSON object$/],
      ['null', /not JSON null \(a label of that name is sent as \["null"\]\)$/],
      [' true ', /not JSON true/],
      ['false', /not JSON false/],
      ['"draft"', /not a JSON string/],
      ['[1,2]', /^labels\[0\]: must be a string$/],
      ['[""]', /^labels\[0\]: must not be empty$/],
      ['["a",null]', /^labels\[1\]: must be a string$/],
      ['[["a"]]', /^labels\[0\]: must be a string$/],
      ['x'.repeat(10_240), /^labels\[0\]: must be at most 64 characters$/],
      [Array.from({ length: 200 }, (_, i) => `l${i}`).join(','), /^labels: must have at most 100 items$/],
      [JSON.stringify(Array.from({ length: 10_000 }, (_, i) => `l${i}`)), /^form field "labels" is longer than 65536 bytes$/],
      ['[draft', /could not parse it as JSON/],
    ];
    for (const [labels, message] of forms) {
      const res = await uploadFiles(d, alice.apiKey, [file()], { fields: { labels } });
      const what = labels.slice(0, 30);
      expect(res.status, what).toBe(400);
      expect(res.body.error.code, what).toBe('invalid_request');
      expect(res.body.error.message, what).toMatch(message);
      expect(res.body.error.details?.[0]?.path, what).toMatch(/^labels/);
      expect(res.body.error.details[0].message, what).toBe(res.body.error.message);
    }
    expect(await documents()).toEqual(before);
    expect(storedFiles(d.dataDir).temp).toEqual([]);
  }, 120_000);

  it('keeps every documented form of labels: names separated by commas (a number among them) and a JSON array', async () => {
    const cases: [string, string[]][] = [
      ['unpaid, Q3 ,2024', ['2024', 'Q3', 'unpaid']],
      ['["null","true"," {x} "]', ['null', 'true', '{x}']],
      ['[]', []],
      ['  ', []],
    ];
    for (const [labels, names] of cases) {
      const res = await uploadFiles(d, alice.apiKey, [file()], { fields: { labels } });
      expect(res.status, labels).toBe(202);
      expect([...res.body.documents[0].labels].sort(), labels).toEqual(names);
    }
  }, 60_000);

  it('refuses document names with characters a person cannot see, on upload and on rename, and keeps joiners and variation selectors', async () => {
    const unseen: [string, string, string][] = [
      ['a\u200bb.txt', 'U+200B', 'an invisible character'],
      ['a\ufeffb.txt', 'U+FEFF', 'an invisible character'],
      ['in\u00advoice.txt', 'U+00AD', 'an invisible character'],
      ['a\u2060b.txt', 'U+2060', 'an invisible character'],
      ['a\u{e0041}b.txt', 'U+E0041', 'an invisible character'],
      ['a\u3164b.txt', 'U+3164', 'an invisible character'],
      ['a\u2028b.txt', 'U+2028', 'a line separator'],
      ['a\u2029b.txt', 'U+2029', 'a paragraph separator'],
      ['fdp\u202eexe.pdf', 'U+202E', 'a bidirectional formatting character'],
      ['a\u0085b.txt', 'U+0085', 'a control character'],
    ];
    for (const [name, code, kind] of unseen) {
      const res = await uploadFiles(d, alice.apiKey, [file(name)]);
      expect(res.status, code).toBe(400);
      expect(res.body.error.message, code).toMatch(new RegExp(`its filename must not contain ${code.replace('+', '\\+')} \\(${kind}\\)$`));
    }
    const kept = ['می‌خواهم.txt', 'team 👨‍💻.txt', 'love ❤️.txt', 'ශ්‍රී.txt'];
    const ids: string[] = [];
    for (const name of kept) {
      const res = await uploadFiles(d, alice.apiKey, [file(name)]);
      expect(res.status, name).toBe(202);
      expect(res.body.documents[0].filename).toBe(name);
      ids.push(res.body.documents[0].id);
    }
    for (const [name, code] of unseen) {
      const res = await api(d, `/api/v1/documents/${ids[0]}`, { method: 'PATCH', token: alice.apiKey, body: { filename: name } });
      expect(res.status, code).toBe(400);
      expect(res.body.error.message, code).toBe(`body.filename: must not contain ${code} (${unseen.find((u) => u[1] === code)![2]})`);
    }
    const renamed = await api(d, `/api/v1/documents/${ids[0]}`, { method: 'PATCH', token: alice.apiKey, body: { filename: 'team 👨‍💻 ❤️.txt' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.filename).toBe('team 👨‍💻 ❤️.txt');
  }, 60_000);

  it('says why a ZIP is refused: more entries than the limit, folders only, plain files', async () => {
    const many = makeZip(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`f${i}.txt`, ''])));
    const folders = makeZip({ 'a/': '', 'a/b/': '', 'c/': '' });
    const files = makeZip({ 'report.pdf': prose('in a zip', 2), 'notes.txt': 'hello', 'more.txt': 'x', 'last.txt': 'y' });
    const cases: [string, Buffer, string][] = [
      ['many.zip', many, '"many.zip" is a ZIP archive of 50,000 entries, more than the 10,000 docsearch opens (accepted: '],
      ['folders.zip', folders, '"folders.zip" is a ZIP archive of folders only (3), with no file in it (accepted: '],
      [
        'files.zip',
        files,
        '"files.zip" is a ZIP archive of 4 files ("report.pdf", "notes.txt", "more.txt" and 1 more), none of them the parts of a DOCX, XLSX, PPTX, ODF or EPUB document: docsearch does not unpack archives, upload the files in it instead (accepted: ',
      ],
    ];
    for (const [name, bytes, message] of cases) {
      const res = await uploadFiles(d, alice.apiKey, [{ name, bytes }]);
      expect(res.status, name).toBe(415);
      expect(res.body.error.message.startsWith(message), res.body.error.message).toBe(true);
    }
    expect((await documents()).map((x) => x.filename)).not.toContain('many.zip');
  }, 60_000);
});
