/**
 * Filters on a library written before chunks carried their document's fields (docsearch v0.2.0's, from the upgrade
 * fixture): the background backfill gives every stored chunk its document's type, upload time, path, labels and
 * metadata (src/ingest/filter-fields.ts), and then a filtered search answers exactly what the (SQL) document list
 * answers for the same filters; a label put on after the upgrade reaches the chunks at once.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filtersToParams } from '../../src/core/filter-params.js';
import { api, type Daemon, removeDir, startDaemon, untilHealth } from '../helpers/daemon.js';
import { FIXTURES, recorded } from '../helpers/release-fixture.js';

describe('filters on a library of v0.2.0', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-filters-upgrade-'));
  let d: Daemon;
  const alice = recorded('v0.2.0', 'embedded').users.find((u) => u.email === 'alice@example.com')!;

  beforeAll(async () => {
    cpSync(join(FIXTURES, 'v0.2.0', 'embedded/data'), dataDir, { recursive: true });
    d = await startDaemon({ dataDir, databaseUrl: '', timeoutMs: 120_000 });
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    removeDir(dataDir);
  });

  const ids = (docs: { id: string }[]) => docs.map((x) => x.id).sort();
  const search = async (filters: Record<string, unknown>) => {
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'the', mode: 'hybrid', group: 'document', limit: 100, filters } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return ids((res.body.documents as { document: { id: string } }[]).map((r) => r.document));
  };
  const list = async (filters: Record<string, unknown>) => ids((await api(d, `/api/v1/documents?${new URLSearchParams([...filtersToParams(filters), ['limit', '100']])}`, { token: alice.apiKey })).body.documents);

  it('backfills every stored chunk, then filters its search as the list filters', async () => {
    await untilHealth(d, (c) => c.backfill?.derivers?.filters?.state === 'done', 'the filters backfill done', 120_000);
    expect((await api(d, '/api/v1/health', { token: alice.apiKey })).body.components.backfill.derivers.filters.pending).toBe(0);
    const all = await list({});
    expect(all.length).toBe(3);
    for (const filters of [{ type: 'pdf' }, { type: ['docx', 'txt'] }, { uploaded_by: alice.email }, { uploaded_since: '2100-01-01' }]) {
      const listed = await list(filters);
      // Every listed document has chunks that match the query (all three do): the search must find exactly them.
      expect(await search(filters), JSON.stringify(filters)).toEqual(listed);
    }
    expect(await search({ type: 'pdf' })).toHaveLength(1);
  });

  it('takes a label put on after the upgrade into search at once', async () => {
    const [first] = await list({ type: 'docx' });
    const patched = await api(d, `/api/v1/documents/${first}`, { method: 'PATCH', token: alice.apiKey, body: { labels: ['policy'] } });
    expect(patched.status).toBe(200);
    expect(await search({ labels: 'policy' })).toEqual([first]);
    expect(await search({ labels: 'policy', type: 'pdf' })).toEqual([]);
  });
});
