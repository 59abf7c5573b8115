/**
 * A backup of a library whose documents change between its database snapshot and its index pin (runBackup's
 * `afterSnapshot` seam, on a library a real daemon serves): a document deleted there is not in the restored library
 * (not a ready document without chunks), one moved there is restored under its new project, found by a search
 * scoped to it, and the rest is restored whole; the summary names both.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackup } from '../../src/admin/backup/backup.js';
import { backupKeyAt } from '../../src/admin/backup/backup-key.js';
import { openRepository } from '../../src/admin/backup/repository.js';
import { openEmbeddedLibrary } from '../../src/admin/backup/running-library.js';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { documents } from './backup-compare.js';

const NOTES = {
  kept: 'Marmots hibernate in burrows through the long alpine winter, waking only when the snow melts.\n',
  deleted: 'The moon pulls the oceans, and the tides rise twice a day along every coast.\n',
  moved: 'Owls hunt at night over the meadows, finding voles by sound alone.\n',
};

describe('a backup while documents are deleted and moved between its database snapshot and its index pin', () => {
  let d: Daemon;
  let user: TestUser;
  const dirs = tempDirs('docsearch-backup');
  const tmp = dirs.make;
  const ids: Record<keyof typeof NOTES, string> = { kept: '', deleted: '', moved: '' };
  let project: string;

  beforeAll(async () => {
    d = await startDaemon();
    dirs.keep(d.dataDir);
    user = await addUser(d);
    const created = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Night birds' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    project = created.body.id;
    for (const key of Object.keys(NOTES) as (keyof typeof NOTES)[]) {
      const up = await uploadFiles(d, user.apiKey, [{ name: `${key}.txt`, bytes: Buffer.from(NOTES[key]) }], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      expect(up.body.documents[0]).toMatchObject({ status: 'ready' });
      ids[key] = up.body.documents[0].id;
    }
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    dirs.removeAll();
  });

  it('restores the library as if the deletion and the move came before the snapshot', async () => {
    const before = await documents(d, user.apiKey);
    const repoDir = tmp('repo');
    const library = await openEmbeddedLibrary(d.dataDir);
    const repo = await openRepository(repoDir, process.env);
    const lines: string[] = [];
    const keyFile = join(tmp('key'), 'backup.key');
    const { key } = await backupKeyAt(keyFile);
    let summary;
    try {
      summary = await runBackup({
        library,
        repo,
        repository: repoDir,
        key,
        progress: { line: (text) => lines.push(text), step: () => ({ add: () => undefined, end: () => undefined }) },
        afterSnapshot: async () => {
          // Deleted for good (a document in the trash keeps its chunks, so a trash alone is no gap in the index).
          expect((await api(d, `/api/v1/documents/${ids.deleted}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
          expect((await api(d, `/api/v1/trash/${ids.deleted}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
          expect((await api(d, `/api/v1/documents/${ids.deleted}`, { token: user.apiKey })).status).toBe(404);
          const moved = await api(d, `/api/v1/documents/${ids.moved}`, { method: 'PATCH', token: user.apiKey, body: { project_id: project } });
          expect(moved.status, JSON.stringify(moved.body)).toBe(200);
        },
      });
    } finally {
      repo.close();
      await library.close();
    }

    const target = join(tmp('restore'), 'data');
    const restored = await runCli(['restore', '--from', repoDir, '--to', target, '--key-file', keyFile, '--json'], { timeoutMs: 240_000 });
    expect(restored.code, restored.stderr).toBe(0);
    const r = await startDaemon({ dataDir: target });
    try {
      const got = await documents(r, user.apiKey);
      expect([...got.keys()].sort(), 'the document deleted in the window is not restored').toEqual([ids.kept, ids.moved].sort());
      for (const key of ['kept', 'moved'] as const) {
        expect(got.get(ids[key])).toMatchObject({ status: 'ready', chunk_count: before.get(ids[key])!.chunk_count });
        expect(got.get(ids[key])!.chunk_count).toBeGreaterThan(0);
      }
      expect((await api(r, `/api/v1/documents/${ids.moved}`, { token: user.apiKey })).body.project_id).toBe(project);

      const search = async (query: string, projectIds?: string[]) => {
        const res = await api(r, '/api/v1/search', { token: user.apiKey, body: { query, limit: 5, ...(projectIds ? { project_ids: projectIds } : {}) } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body.results as { document: { id: string } }[]).map((h) => h.document.id);
      };
      expect((await search('where do marmots hibernate'))[0]).toBe(ids.kept);
      expect(new Set(await search('owls hunting at night', [project])), 'the moved document is under its new project').toEqual(new Set([ids.moved]));
      expect(await search('why do tides rise')).not.toContain(ids.deleted);
    } finally {
      await r.stop();
    }

    expect(summary).toMatchObject({ deleted_while_taken: [ids.deleted], moved_while_taken: [ids.moved] });
    expect(lines.join('\n')).toContain(`left out, deleted after the database snapshot and before the index pin: ${ids.deleted}`);
  }, 600_000);
});
