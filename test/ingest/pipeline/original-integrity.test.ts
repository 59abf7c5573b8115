/**
 * A stored original is checked against the hash it is stored under whenever it is read whole: bytes changed since
 * they were placed (a disk, an object store, or a writer that cut them short, as an e-mail's attachments once were)
 * fail their document with a clear error instead of being indexed as if they were the file. Deleting the document and
 * uploading the file again then indexes it. The viewer, which renders some types from their original, shows such a
 * document's indexed text instead, and its thumbnail is a 404 that says why.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { loggedIn } from '../../web/library-client.js';
import { makePdf } from './fixtures.js';
import { processAgain, uploadFiles, waitFor } from './helpers.js';

describe('a damaged original', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('fails its document when it is read again, naming the damage; deleted and uploaded again, the file is indexed', async () => {
    const text = Buffer.from('The lighthouse keeper logs the fog signal every hour between dusk and dawn.\n');
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'log.txt', bytes: text }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0];
    expect(doc).toMatchObject({ status: 'ready' });

    // Cut short on disk, then processed again (as a retry after a failure does).
    const stored = join(d.dataDir, 'files', doc.sha256.slice(0, 2), doc.sha256);
    chmodSync(stored, 0o600);
    writeFileSync(stored, text.subarray(0, 20));
    await processAgain(d, alice.apiKey, doc.id);
    const settled = await waitFor(async () => {
      const now = (await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey })).body;
      return (now.status === 'ready' || now.status === 'failed') && now;
    }, 120_000, 'the document processed again');
    expect(settled.status, JSON.stringify(settled)).toBe('failed');
    expect(settled.error).toMatch(/^the stored file is damaged .*: delete this document and upload the file again$/);

    expect((await api(d, `/api/v1/documents/${doc.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    const again = await uploadFiles(d, alice.apiKey, [{ name: 'log.txt', bytes: text }], { query: '?wait=true' });
    expect(again.body.documents[0]).toMatchObject({ status: 'ready', sha256: doc.sha256 });
    expect(again.body.documents[0].chunk_count).toBeGreaterThan(0);
  });

  it('is shown in the viewer as its indexed text, not rendered from the damaged bytes (nor a server error)', async () => {
    const html = Buffer.from('<html><body><h1>Tide table</h1><p>High water at the north pier is at seven minutes past six.</p></body></html>');
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'tides.html', bytes: html }], { query: '?wait=true' });
    const doc = up.body.documents[0];
    expect(doc).toMatchObject({ status: 'ready' });
    const stored = join(d.dataDir, 'files', doc.sha256.slice(0, 2), doc.sha256);
    chmodSync(stored, 0o600);
    writeFileSync(stored, '<html><body><p>Something else entirely.</p></body></html>');
    const page = await (await loggedIn(d, alice)).get(`/documents/${doc.id}/view`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('seven minutes past six');
    expect(page.text).not.toContain('Something else entirely');
  });

  it("has no thumbnail, and its 404 says the stored file is damaged (not a server error)", async () => {
    const pdf = makePdf([['Pilotage fees are paid at the harbour office before departure.']]);
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'fees.pdf', bytes: pdf }], { query: '?wait=true' });
    const doc = up.body.documents[0];
    expect(doc).toMatchObject({ status: 'ready' });
    const stored = join(d.dataDir, 'files', doc.sha256.slice(0, 2), doc.sha256);
    chmodSync(stored, 0o600);
    writeFileSync(stored, pdf.subarray(0, pdf.length - 10));
    const res = await api(d, `/api/v1/documents/${doc.id}/thumbnail`, { token: alice.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe('the stored file of this PDF is missing or damaged: no page can be drawn');
  });
});
