/**
 * A library whose chunk table holds no rows — its only document purged from the trash (or, as a clean-clone CI run
 * of restore-drill.test.ts met it, backed up while its documents were still queued) — still records which embedder
 * made its index. `migrate` copied no row, so made no table and no index info in the target, and its verification
 * then failed ("the target's are not recorded"). Now the copy records the same, and a daemon on it ingests and finds.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('migrate a library whose chunk index is empty', () => {
  const dirs = tempDirs('docsearch-migrate-empty-index');
  let source: string;
  let user: TestUser;

  beforeAll(async () => {
    const d = await startDaemon();
    source = d.dataDir;
    dirs.keep(source);
    try {
      user = await addUser(d);
      const up = await uploadFiles(d, user.apiKey, [{ name: 'gone.txt', bytes: Buffer.from('The pangolin register was purged.') }], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const id = up.body.documents[0].id as string;
      expect((await api(d, `/api/v1/documents/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
      expect((await api(d, `/api/v1/trash/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    } finally {
      await d.stop();
    }
  }, 120_000);
  afterAll(() => dirs.removeAll());

  it('verifies, records the embedder, and the copy ingests and finds', async () => {
    const target = join(dirs.make('migrated'), 'data');
    const moved = await runCli(['migrate', '--from', source, '--to', target, '--json'], { timeoutMs: 240_000 });
    expect(moved.code, moved.stderr).toBe(0);
    const report = JSON.parse(moved.stdout) as { index: { embedder_id: string | null } | null };
    expect(report.index?.embedder_id).toMatch(/^builtin:/);
    // Run again, it finds nothing to copy and nothing that differs.
    const again = await runCli(['migrate', '--from', source, '--to', target, '--json'], { timeoutMs: 240_000 });
    expect(again.code, again.stderr).toBe(0);
    const d = await startDaemon({ dataDir: target });
    try {
      const up = await uploadFiles(d, user.apiKey, [{ name: 'new.txt', bytes: Buffer.from('The okapi catalogue arrived after the move.') }], { query: '?wait=true' });
      expect(up.body.documents[0].status).toBe('ready');
      const found = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'okapi catalogue', mode: 'hybrid' } });
      expect((found.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toEqual(['new.txt']);
    } finally {
      await d.stop();
    }
  }, 600_000);
});
