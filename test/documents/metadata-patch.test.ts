/**
 * A document's metadata changes after upload (docs/api.md, *Metadata*): `PATCH /documents/{id}` merges keys over it
 * (null removes one), and uploading bytes the project already holds merges the upload's metadata as it adds its
 * labels. Search filters, which read the metadata the chunks carry, and the list's filters, which read it in SQL,
 * see the change at once. Before, nothing changed a document's metadata: PATCH refused the field, and a repeated
 * upload's metadata was dropped. Runs on SQLite and PostgreSQL (vitest.config.ts).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('document metadata after upload', () => {
  let d: Daemon;
  let alice: TestUser;
  const bytes = Buffer.from('The tide tables for the northern harbour are printed every spring by the pilots.');

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  /** The chunk ids a filtered search finds for the tide question. */
  const found = async (metadata: Record<string, unknown>): Promise<string[]> => {
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'tide tables harbour', filters: { metadata } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { results: { document: { id: string } }[] }).results.map((r) => r.document.id);
  };
  const listed = async (query: string): Promise<string[]> => {
    const res = await api(d, `/api/v1/documents?${query}`, { token: alice.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { documents: { id: string }[] }).documents.map((x) => x.id);
  };

  it('merges PATCH metadata over its own, and the filters find it by the new values at once', async () => {
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'tides.txt', bytes }], { query: '?wait=true', metadata: '{"team":"ops","year":2020,"keep":"x"}' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = up.body.documents[0].id as string;
    expect(await found({ year: 2020 })).toContain(id);

    const patched = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey, method: 'PATCH', body: { metadata: { year: 2021, team: null, tier: 'gold' } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.metadata).toEqual({ year: 2021, keep: 'x', tier: 'gold' });

    expect(await found({ year: 2021 })).toContain(id);
    expect(await found({ year: 2020 })).not.toContain(id);
    expect(await found({ team: { $exists: true } })).not.toContain(id);
    expect(await found({ tier: 'gold', keep: 'x' })).toContain(id);
    expect(await listed('metadata.tier=gold')).toEqual([id]);
    expect(await listed('metadata.team=ops')).toEqual([]);

    // The same upload again merges its metadata, as it adds its labels.
    const again = await uploadFiles(d, alice.apiKey, [{ name: 'tides.txt', bytes }], { metadata: '{"year":2022}', fields: { labels: 'pilots' } });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.documents[0]).toMatchObject({ id, duplicate: true, metadata: { year: 2022, keep: 'x', tier: 'gold' }, labels: ['pilots'] });
    expect(await found({ year: 2022 })).toContain(id);
    expect(await listed('metadata.year=2022')).toEqual([id]);
  });

  it('refuses metadata that is not an object, nests too deep or would pass 64 KiB, and changes nothing', async () => {
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'pilots.txt', bytes: Buffer.from('Pilots board ships at the outer buoy in any weather.') }], { query: '?wait=true', metadata: '{"a":1}' });
    const id = up.body.documents[0].id as string;
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { n: deep };
    for (const [metadata, said] of [
      [['x'], /metadata/],
      ['x', /metadata/],
      [{ deep }, /nested deeper than 32/], // the router refuses any body nested so deep
    ] as const) {
      const res = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey, method: 'PATCH', body: { metadata, filename: 'renamed.txt' } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body.error)).toMatch(said);
    }
    const half = 'x'.repeat(40 * 1024);
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey, method: 'PATCH', body: { metadata: { one: half } } })).status).toBe(200);
    const over = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey, method: 'PATCH', body: { metadata: { two: half }, filename: 'renamed.txt' } });
    expect(over.status, JSON.stringify(over.body)).toBe(400);
    expect(over.body.error.message).toMatch(/64 KiB/);
    const now = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey });
    expect(now.body).toMatchObject({ filename: 'pilots.txt', metadata: { a: 1, one: half } });
    expect(now.body.metadata).not.toHaveProperty('two');
  });
});
