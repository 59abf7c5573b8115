import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../../helpers/daemon.js';
import { prose } from './fixtures.js';
import { storedChunks, storedFiles, uploadFiles, waitFor } from './helpers.js';

/**
 * kill -9 in the middle of ingesting 20 documents, restart on the same data dir: every document ends ready,
 * no document has duplicate chunks, and the file store holds exactly the referenced originals.
 */
describe('crash recovery', () => {
  let d: Daemon | undefined;
  let dataDir = '';
  afterAll(async () => {
    if (d) await d.stop();
    if (dataDir) removeDir(dataDir);
  });

  it('finishes all 20 documents after SIGKILL mid-ingest, without duplicate chunks or orphaned files', async () => {
    d = await startDaemon();
    dataDir = d.dataDir;
    const user = await addUser(d);
    const files = Array.from({ length: 20 }, (_, i) => ({
      name: `doc-${i}.txt`,
      bytes: Buffer.from(`${prose(`crash-${i}`, 60)}\n\n${prose(`crash-tail-${i}`, 60)}\n`),
    }));
    const ids: string[] = [];
    for (let i = 0; i < files.length; i += 5) {
      const res = await uploadFiles(d, user.apiKey, files.slice(i, i + 5));
      expect(res.status).toBe(202);
      ids.push(...res.body.documents.map((x: { id: string }) => x.id));
    }
    // Kill once some documents are done and others are not.
    await waitFor(
      async () => {
        const list = await api(d!, '/api/v1/documents?status=ready&limit=100', { token: user.apiKey });
        return list.body.documents.length >= 3;
      },
      60_000,
      'a few documents ready',
    );
    const before = await api(d, '/api/v1/documents?limit=100', { token: user.apiKey });
    const statuses = before.body.documents.map((x: { status: string }) => x.status);
    expect(statuses.filter((s: string) => s !== 'ready').length).toBeGreaterThan(0);
    await d.stop('SIGKILL');

    d = await startDaemon({ dataDir });
    const all = await waitFor(
      async () => {
        const list = await api(d!, '/api/v1/documents?limit=100', { token: user.apiKey });
        const docs = list.body.documents as { id: string; status: string; chunk_count: number; sha256: string; error: string | null }[];
        return docs.length === 20 && docs.every((x) => x.status === 'ready' || x.status === 'failed') ? docs : undefined;
      },
      180_000,
      'all 20 documents settled after restart',
    );
    expect(all.map((x) => x.id).sort()).toEqual([...ids].sort());
    expect(all.filter((x) => x.status !== 'ready').map((x) => x.error)).toEqual([]);
    for (const doc of all) {
      const stored = await storedChunks(dataDir, doc.id);
      expect(stored.count, doc.id).toBe(doc.chunk_count);
      expect(new Set(stored.rows.map((r) => r.chunk_index)).size, doc.id).toBe(doc.chunk_count);
      expect(doc.chunk_count).toBeGreaterThan(0);
    }
    const onDisk = storedFiles(dataDir);
    expect(onDisk.temp).toEqual([]);
    expect(onDisk.originals.sort()).toEqual(all.map((x) => x.sha256).sort());
    await d.logLine('"event":"ingest.recovered"');
  }, 300_000);
});
