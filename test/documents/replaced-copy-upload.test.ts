/**
 * Bytes whose document a newer version at its path has replaced are no longer in the project: the old version is
 * hidden from search and lists at once, and deleted for good after a grace of 15 s (REPLACED_GRACE_MS). An upload of
 * those bytes in that window was answered with the hidden document (`duplicate: true`), which then went: the upload
 * was accepted and lost. It is a new document now, as bytes whose document is in the trash already were. Runs on
 * SQLite and PostgreSQL (vitest.config.ts).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('an upload of bytes a newer version replaced', () => {
  let d: Daemon;
  let alice: TestUser;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  const listed = async (): Promise<string[]> => {
    const res = await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { documents: { id: string }[] }).documents.map((x) => x.id);
  };
  const upload = async (name: string, text: string, path?: string) => {
    const res = await uploadFiles(d, alice.apiKey, [{ name, bytes: Buffer.from(text) }], { query: '?wait=true', ...(path ? { fields: { paths: JSON.stringify([path]) } } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.documents[0] as { id: string; duplicate: boolean; status: string; filename: string };
  };

  it('is a new document that stays, not the hidden old version that goes', async () => {
    const first = 'The lock keeper opens the upper gates at dawn, when the river is calm.';
    const old = await upload('a.txt', first, 'a.txt');
    const newer = await upload('a.txt', 'The lock keeper now opens the gates at noon, after the barges have passed.', 'a.txt');
    expect(newer.id).not.toBe(old.id);
    expect(newer.status).toBe('ready');
    // The old version is out of the list at once (it waits out the grace hidden).
    expect(await listed()).not.toContain(old.id);

    const again = await upload('b.txt', first);
    expect(again.id).not.toBe(old.id);
    expect(again.duplicate).not.toBe(true);
    expect(again).toMatchObject({ status: 'ready', filename: 'b.txt' });
    expect(await listed()).toEqual(expect.arrayContaining([newer.id, again.id]));

    // After the grace, when the replaced version is deleted for good, the upload is still there and found.
    await waitFor(async () => (await api(d, `/api/v1/documents/${old.id}`, { token: alice.apiKey })).status === 404, 60_000, 'the replaced version deleted');
    expect((await api(d, `/api/v1/documents/${again.id}`, { token: alice.apiKey })).status).toBe(200);
    const found = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'upper gates at dawn', mode: 'keyword' } });
    expect((found.body as { results: { document: { id: string } }[] }).results.map((r) => r.document.id)).toContain(again.id);
  }, 120_000);
});
