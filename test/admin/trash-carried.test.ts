/**
 * The trash goes where the library goes (#53 item 7): after `docsearch backup` + `restore`, and after `docsearch
 * migrate` into another data directory, a document deleted before is still in the trash, still out of search, and
 * restored from there with its chunks (searchable again, no re-embedding) under its id. Labels go too (issue 60): the
 * trashed document keeps its labels in the trash and after its restore, where the label filter finds it again, and
 * so does a person's saved search, and one shared with the project, which its member still sees and runs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('backup, restore and migrate carry the trash', () => {
  const dirs = tempDirs('docsearch-trash-carried');
  let source: string;
  let user: TestUser;
  let member: TestUser;
  let kept: string;
  let trashed: string;
  let projectId: string;

  /** The project's labels and how many documents (out of the trash) carry each. */
  const labelCounts = async (d: Daemon) =>
    Object.fromEntries(((await api(d, `/api/v1/projects/${projectId}/labels`, { token: user.apiKey })).body.labels as { name: string; document_count: number }[]).map((l) => [l.name, l.document_count]));

  beforeAll(async () => {
    const d = await startDaemon();
    source = d.dataDir;
    dirs.keep(source);
    try {
      user = await addUser(d);
      const up = await uploadFiles(d, user.apiKey, [
        { name: 'kept.txt', bytes: Buffer.from('The marsupial ledger stays.') },
        { name: 'trashed.txt', bytes: Buffer.from('The marsupial almanac was deleted.') },
      ], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      [kept, trashed] = (up.body.documents as { id: string }[]).map((x) => x.id) as [string, string];
      projectId = (up.body.documents as { project_id: string }[])[0]!.project_id;
      for (const [id, labels] of [[kept, ['ledger']], [trashed, ['almanac', 'Deleted']]] as const) {
        expect((await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: user.apiKey, body: { labels } })).status).toBe(200);
      }
      const saved = await api(d, '/api/v1/saved-searches', { token: user.apiKey, body: { name: 'Almanacs', search: { query: 'marsupial', mode: 'keyword', filters: { labels: 'almanac' } } } });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      member = await addUser(d);
      expect((await api(d, `/api/v1/projects/${projectId}/members`, { token: user.apiKey, body: { email: member.email, role: 'viewer' } })).status).toBe(201);
      const shared = await api(d, '/api/v1/saved-searches', { token: user.apiKey, body: { name: 'Ledgers', search: { query: 'marsupial', mode: 'keyword', filters: { labels: 'ledger' } }, project_id: projectId } });
      expect(shared.status, JSON.stringify(shared.body)).toBe(201);
      expect((await api(d, `/api/v1/documents/${trashed}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
      // In the trash, out of the label's count and its filter, but still carrying its labels.
      expect((await api(d, '/api/v1/trash', { token: user.apiKey })).body.documents[0].labels).toEqual(['almanac', 'Deleted']);
      expect(await labelCounts(d)).toEqual({ ledger: 1, almanac: 0, Deleted: 0 });
    } finally {
      await d.stop();
    }
  }, 300_000);
  afterAll(() => dirs.removeAll());

  async function expectTrashCarried(dataDir: string): Promise<void> {
    const r = await startDaemon({ dataDir });
    try {
      const search = async (filters?: object) =>
        ((await api(r, '/api/v1/search', { token: user.apiKey, body: { query: 'marsupial', mode: 'keyword', ...(filters ? { filters } : {}) } })).body.results as { document: { id: string } }[]).map((x) => x.document.id).sort();
      expect(await search()).toEqual([kept]);
      expect(await search({ labels: 'almanac' })).toEqual([]);
      expect(await labelCounts(r)).toEqual({ ledger: 1, almanac: 0, Deleted: 0 });
      const trash = await api(r, '/api/v1/trash', { token: user.apiKey });
      expect(trash.body.documents.map((x: { id: string; labels: string[] }) => [x.id, x.labels])).toEqual([[trashed, ['almanac', 'Deleted']]]);
      expect((await api(r, `/api/v1/trash/${trashed}/restore`, { method: 'POST', token: user.apiKey })).status).toBe(200);
      expect(await search()).toEqual([kept, trashed].sort());
      expect(await search({ labels: 'almanac' })).toEqual([trashed]);
      expect(await search({ labels: 'ledger' })).toEqual([kept]);
      expect(await labelCounts(r)).toEqual({ ledger: 1, almanac: 1, Deleted: 1 });
      expect((await api(r, `/api/v1/documents/${trashed}`, { token: user.apiKey })).body.labels).toEqual(['almanac', 'Deleted']);
      const saved = (await api(r, '/api/v1/saved-searches', { token: user.apiKey })).body.saved_searches as { name: string; search: object }[];
      expect(saved.map((v) => v.name)).toEqual(['Almanacs', 'Ledgers']);
      expect(saved[0]!.search).toMatchObject({ query: 'marsupial', mode: 'keyword', filters: { labels: 'almanac' } });
      expect(await search((saved[0]!.search as { filters: object }).filters)).toEqual([trashed]);
      // Shared with the project: its member still sees it, whose it is and where, and runs it.
      const seen = (await api(r, '/api/v1/saved-searches', { token: member.apiKey })).body.saved_searches as { name: string; project_id: string; created_by: string; mine: boolean; search: object }[];
      expect(seen.map((v) => [v.name, v.project_id, v.created_by, v.mine])).toEqual([['Ledgers', projectId, user.email, false]]);
      const run = await api(r, '/api/v1/search', { token: member.apiKey, body: seen[0]!.search });
      expect((run.body.results as { document: { id: string } }[]).map((x) => x.document.id)).toEqual([kept]);
    } finally {
      await r.stop();
    }
  }

  it('backup and restore', async () => {
    const repo = dirs.make('repo');
    const backup = await runCli(['backup', '--data-dir', source, '--to', repo], { timeoutMs: 240_000 });
    expect(backup.code, backup.stderr).toBe(0);
    const target = join(dirs.make('restored'), 'data');
    const restored = await runCli(['restore', '--from', repo, '--to', target, '--key-file', join(source, 'backup.key')], { timeoutMs: 240_000 });
    expect(restored.code, restored.stderr).toBe(0);
    await expectTrashCarried(target);
  }, 600_000);

  it('migrate into another data directory', async () => {
    const target = join(dirs.make('migrated'), 'data');
    const moved = await runCli(['migrate', '--from', source, '--to', target], { timeoutMs: 240_000 });
    expect(moved.code, moved.stderr).toBe(0);
    await expectTrashCarried(target);
  }, 600_000);
});
