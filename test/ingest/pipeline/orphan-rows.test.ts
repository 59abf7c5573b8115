import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../../helpers/daemon.js';
import { prose } from './fixtures.js';
import { storedChunks, uploadFiles, waitFor } from './helpers.js';

/** Rows of the builtin reranker's sentence windows stored for a document. */
async function storedWindows(dataDir: string, documentId: string): Promise<number> {
  const db = await lancedb.connect(join(dataDir, 'lancedb'));
  try {
    const table = await db.openTable('chunk_windows');
    try {
      return await table.countRows(`document_id = '${documentId}'`);
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}

/**
 * Index rows whose document is gone (a crash between deleting a document's rows and its record, or a library written
 * in shared mode before deletes looked at the table's latest version) are removed at the next start: chunks and
 * sentence windows alike, and nothing of the documents that remain.
 */
describe('index rows of deleted documents', () => {
  it('are swept at start; the remaining documents keep theirs', async () => {
    const args = ['--reranker', 'builtin'];
    let d: Daemon | undefined = await startDaemon({ args });
    const { dataDir } = d;
    try {
      const user = await addUser(d);
      const res = await uploadFiles(d, user.apiKey, [
        { name: 'kept.txt', bytes: Buffer.from(`${prose('orphan-kept', 40)}\n`) },
        { name: 'gone.txt', bytes: Buffer.from(`${prose('orphan-gone', 40)}\n`) },
      ]);
      expect(res.status).toBe(202);
      const [kept, gone] = (res.body.documents as { id: string }[]).map((x) => x.id) as [string, string];
      await waitFor(
        async () => (await api(d!, '/api/v1/documents?status=ready&limit=10', { token: user.apiKey })).body.documents.length === 2,
        60_000,
        'both documents ready',
      );
      await d.stop();
      d = undefined;

      // The document's record is gone, its rows are not: what the crash or the shared-mode race left.
      const sqlite = new BetterSqlite3(join(dataDir, 'docsearch.db'));
      sqlite.pragma('foreign_keys = ON');
      expect(sqlite.prepare('DELETE FROM documents WHERE id = ?').run(gone).changes).toBe(1);
      sqlite.close();
      const keptChunks = (await storedChunks(dataDir, kept)).count;
      const keptWindows = await storedWindows(dataDir, kept);
      expect(keptChunks).toBeGreaterThan(0);
      expect(keptWindows).toBeGreaterThan(0);
      expect((await storedChunks(dataDir, gone)).count).toBeGreaterThan(0);
      expect(await storedWindows(dataDir, gone)).toBeGreaterThan(0);

      d = await startDaemon({ dataDir, args });
      await waitFor(async () => /index\.orphans_swept/.test(d!.stdout() + d!.stderr()), 60_000, 'the sweep logged');
      expect(d.stdout() + d.stderr()).toMatch(/"documents":1\b/);
      await d.stop();
      d = undefined;
      expect((await storedChunks(dataDir, gone)).count).toBe(0);
      expect(await storedWindows(dataDir, gone)).toBe(0);
      expect((await storedChunks(dataDir, kept)).count).toBe(keptChunks);
      expect(await storedWindows(dataDir, kept)).toBe(keptWindows);
    } finally {
      if (d) await d.stop();
      removeDir(dataDir);
    }
  }, 180_000);
});
