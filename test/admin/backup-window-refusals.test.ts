/**
 * docs/operations.md, "Backup and restore", on what refuses a backup while it runs, through runBackup's
 * `afterSnapshot` seam on a library a real daemon serves. Only one backup of a library runs at a time: a second one
 * started then is refused. And a document moved between the database snapshot and the index pin into a project made
 * in that same window cannot be shown by the snapshot, so "a project made in that window as well fails the backup:
 * run it again": the run fails saying so, leaves no backup a restore would take (and no work folder), and the next
 * run succeeds, with the document under its new project.
 */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { backupInProcess } from './backup-compare.js';

describe('a backup while it runs', () => {
  let d: Daemon;
  let user: TestUser;
  let doc: string;
  const dirs = tempDirs('docsearch-backup');

  beforeAll(async () => {
    d = await startDaemon();
    dirs.keep(d.dataDir);
    user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'owls.txt', bytes: Buffer.from('Owls hunt at night over the meadows, finding voles by sound alone.\n') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    doc = up.body.documents[0].id;
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    dirs.removeAll();
  });

  it('refuses a second backup; a move into a project made in its window fails it, saying to run it again, leaving nothing a restore takes; the next run succeeds', async () => {
    const repoDir = dirs.make('repo');
    const keyFile = join(dirs.make('key'), 'backup.key');
    const workFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`docsearch-backup-${process.pid}-`));
    const before = workFolders();
    let project = '';
    const err = await backupInProcess(d.dataDir, repoDir, keyFile, async () => {
      const second = await runCli(['backup', '--data-dir', d.dataDir, '--to', dirs.make('second-repo'), '--key-file', keyFile]);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`error: another backup of ${d.dataDir} is running\nhint: wait for it to finish\n`);
      const made = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Made in the window' } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      project = made.body.id;
      const moved = await api(d, `/api/v1/documents/${doc}`, { method: 'PATCH', token: user.apiKey, body: { project_id: project } });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    });
    expect(err?.message).toContain(`document ${doc} moved to project ${project} as the backup began, and the database snapshot cannot show it there`);
    expect(err?.hint).toBe('run the backup again');
    expect(workFolders(), 'its work folder is gone').toEqual(before);
    const listed = await runCli(['restore', '--from', repoDir, '--list', '--json', '--key-file', keyFile]);
    expect(JSON.parse(listed.stdout).map((b: { status: string }) => b.status)).toEqual(['incomplete']);
    const target = join(dirs.make('refused'), 'data');
    expect((await runCli(['restore', '--from', repoDir, '--to', target, '--key-file', keyFile])).code, 'no backup to restore').toBe(1);

    // Run again: the move is in its snapshot now.
    const again = await runCli(['backup', '--data-dir', d.dataDir, '--to', repoDir, '--key-file', keyFile, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const restoredDir = join(dirs.make('restored'), 'data');
    const restored = await runCli(['restore', '--from', repoDir, '--to', restoredDir, '--key-file', keyFile]);
    expect(restored.code, restored.stderr).toBe(0);
    const r = await startDaemon({ dataDir: restoredDir });
    try {
      expect((await api(r, `/api/v1/documents/${doc}`, { token: user.apiKey })).body).toMatchObject({ project_id: project, status: 'ready' });
    } finally {
      await r.stop();
    }
  }, 300_000);
});
