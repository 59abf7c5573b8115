/**
 * docs/ingest.md, Queue and worker: "A crash counts as an attempt too, so a file that kills the daemon every time
 * ends failed instead of looping." The daemon is killed (SIGKILL) while it processes the same document, five times;
 * the sixth start fails that document, saying so, goes on with the next upload, and the daemon stays up.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../../helpers/daemon.js';
import { bigText, prose } from './fixtures.js';
import { uploadFiles, waitFor } from './helpers.js';

describe('a document the daemon dies on every time', () => {
  let d: Daemon | undefined;
  let dataDir = '';
  afterAll(async () => {
    if (d) await d.stop();
    if (dataDir) removeDir(dataDir);
  });

  it('is failed after five interrupted attempts instead of being claimed forever', async () => {
    d = await startDaemon();
    dataDir = d.dataDir;
    const user = await addUser(d);
    // Big enough that it is still being embedded when the daemon is killed.
    const up = await uploadFiles(d, user.apiKey, [{ name: 'fatal.txt', bytes: bigText(2) }]);
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    const doc = async () => (await api(d!, `/api/v1/documents/${id}`, { token: user.apiKey })).body;

    // A row killed while processing still says so after the restart: only one the new process claimed (markProcessing
    // writes updated_at) is an attempt under way.
    let killedAt = 0;
    for (let crash = 1; crash <= 5; crash++) {
      await waitFor(async () => {
        const now = await doc();
        return now.status === 'processing' && Date.parse(now.updated_at) > killedAt;
      }, 60_000, `attempt ${crash} under way`, { intervalMs: 50 });
      killedAt = Date.now();
      await d.stop('SIGKILL');
      d = await startDaemon({ dataDir });
    }
    const failed = await waitFor(async () => {
      const now = await doc();
      return now.status === 'failed' ? now : undefined;
    }, 60_000, 'the document failed');
    expect(failed).toMatchObject({ chunk_count: 0, error: 'processing was interrupted 5 times — gave up' });
    const next = await uploadFiles(d, user.apiKey, [{ name: 'next.txt', bytes: Buffer.from(prose('after the crash loop', 6)) }], { query: '?wait=true&wait_timeout=60' });
    expect(next.body.documents[0]).toMatchObject({ status: 'ready' });
  }, 300_000);
});
