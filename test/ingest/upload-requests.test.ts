/**
 * docs/ingest.md, Upload contract, for requests of several files (upload.test.ts holds the one-file rules): a
 * request is all-or-nothing — a file refused anywhere in it (415 by its bytes, 415 empty) keeps none of the others,
 * nor their temp files; `metadata` is stored on each document; the same bytes twice in one request are one document,
 * the second answer a duplicate of the first.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { ELF, prose } from './pipeline/fixtures.js';
import { storedFiles, uploadFiles } from './pipeline/helpers.js';

describe('an upload of several files', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  }, { args: ['--ocr', 'off'] });

  const filenames = async () => (await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey })).body.documents.map((x: { filename: string }) => x.filename);

  it('keeps none of its files when one of them is refused, wherever it is', async () => {
    const good = (n: string) => ({ name: `${n}.txt`, bytes: Buffer.from(prose(`kept-${n}`, 4)) });
    for (const bad of [{ name: 'program.txt', bytes: ELF }, { name: 'empty.txt', bytes: Buffer.alloc(0) }]) {
      const res = await uploadFiles(d, alice.apiKey, [good(`before-${bad.name}`), bad, good(`after-${bad.name}`)]);
      expect(res.status, bad.name).toBe(415);
      expect(res.body.error.message, bad.name).toMatch(new RegExp(`^"${bad.name}" is `));
    }
    expect(await filenames()).toEqual([]);
    expect(storedFiles(d.dataDir)).toEqual({ originals: [], temp: [] });
  }, 30_000);

  it('stores the metadata on each document, and the same bytes twice are one document', async () => {
    const bytes = Buffer.from(prose('twice in one request', 6));
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'first.txt', bytes }, { name: 'second.txt', bytes }, { name: 'other.txt', bytes: Buffer.from(prose('other', 6)) }], {
      query: '?wait=true',
      metadata: '{"batch":"b-7"}',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [first, second, other] = res.body.documents;
    expect(first).toMatchObject({ filename: 'first.txt', status: 'ready', metadata: { batch: 'b-7' } });
    expect(second).toMatchObject({ id: first.id, filename: 'first.txt', duplicate: true });
    expect(other).toMatchObject({ filename: 'other.txt', status: 'ready', metadata: { batch: 'b-7' } });
    expect((await filenames()).sort()).toEqual(['first.txt', 'other.txt']);
  }, 60_000);
});
