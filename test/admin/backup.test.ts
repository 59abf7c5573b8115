/**
 * `docsearch backup` and `docsearch restore` through the built binary, on a library a real daemon serves while 4
 * clients upload and 2 search: the restored library holds the source's documents, chunks and search results as of
 * the backup's moment, and the backup key with which backup sealed it (made in the data dir on the first run);
 * a second run copies only what changed; a backup killed midway is listed as incomplete and never restored, one
 * stopped by Ctrl-C says so and cleans up after itself; a
 * damaged, newer or misplaced backup is refused, saying why. (test/admin/restore-refusals.test.ts: what restore
 * refuses of a repository someone else wrote to.)
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { localIndex } from '../helpers/chunk-rows.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { expectIncremental, expectRestoredAsOfBackup, heldSha256s, settled, underLoad } from './backup-compare.js';

const PDFS = ['latex-1col.pdf', 'pandoc.pdf', 'libreoffice.pdf'].map((n) => ({ name: n, bytes: readFileSync(join(REPO, 'test/fixtures/extract', n)) }));

describe('docsearch backup and restore of a running embedded library', () => {
  let d: Daemon;
  let user: TestUser;
  const dirs = tempDirs('docsearch-backup');
  const tmp = dirs.make;
  const cli = (args: string[], timeoutMs = 240_000) => runCli(args, { timeoutMs });
  let repo: string;
  let first: any;
  /** Where backup makes its key: `backup.key` in the data dir. */
  let keyFile: string;

  let sourceId: string;
  let projectId: string;

  beforeAll(async () => {
    // A source (of an empty folder: no documents of its own) that must come back with the restore.
    const sources = tmp('sources');
    d = await startDaemon({ args: ['--source-roots', sources] });
    dirs.keep(d.dataDir);
    user = await addUser(d);
    projectId = (await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects[0].id;
    const source = await api(d, `/api/v1/projects/${projectId}/sources`, { token: user.apiKey, body: { url: `file://${sources}`, every: '1d' } });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    sourceId = source.body.id;
    const up = await uploadFiles(d, user.apiKey, PDFS, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    repo = tmp('repo');
    keyFile = join(d.dataDir, 'backup.key');
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    dirs.removeAll();
  });

  it('backs up while 4 clients upload and 2 search; the restore equals the source at the backup moment', async () => {
    const readyBefore = new Set<string>();
    const res = await underLoad(d, user.apiKey, () => cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--json']), readyBefore);
    expect(res.code, res.stderr).toBe(0);
    first = JSON.parse(res.stdout);
    expect(first).toMatchObject({ based_on: null, files: { reused: 0 }, originals: { missing: [] } });
    expect(first.files.copied).toBe(first.files.total);
    expect(res.stderr).toMatch(/database: snapshot taken at/);
    // The first backup made the key that seals it, for its owner's eyes only, and said so.
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(res.stderr).toContain(`made the backup key ${keyFile} (key ${first.key_id}): keep a copy of it apart from the backups`);

    await settled(d, user.apiKey);
    const target = join(tmp('restore'), 'data');
    const restored = await cli(['restore', '--from', repo, '--to', target, '--key-file', keyFile, '--json']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ id: first.id, verified: true, key_id: first.key_id });
    // The restored library's backups go on under the same key.
    expect(readFileSync(join(target, 'backup.key'), 'utf8')).toBe(readFileSync(keyFile, 'utf8'));
    expect(statSync(join(target, 'backup.key')).mode & 0o777).toBe(0o600);

    const r = await startDaemon({ dataDir: target });
    try {
      // Documents still queued or processing at the backup's moment are finished by the restored daemon.
      await settled(r, user.apiKey);
      const snapshot = join(repo, 'backups', first.id, 'database.sqlite');
      const source = await api(r, `/api/v1/projects/${projectId}/sources/${sourceId}`, { token: user.apiKey });
      expect(source.status).toBe(200);
      expect(source.body).toMatchObject({ kind: 'folder', every: '1d' });
      await expectRestoredAsOfBackup({ daemon: d, index: localIndex(d.dataDir) }, { daemon: r, index: localIndex(target) }, user.apiKey, snapshot, PDFS.length, readyBefore);
    } finally {
      await r.stop();
    }
  }, 900_000);

  it('an incremental run copies only new files', async () => {
    const manifest = (id: string) => JSON.parse(readFileSync(join(repo, 'backups', id, 'manifest.json'), 'utf8')) as { files: { path: string; key: string; size: number }[] };
    const up = await uploadFiles(d, user.apiKey, [{ name: 'new.txt', bytes: Buffer.from('Herons wait motionless in the shallows for fish.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    const res = await cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s.based_on).toBe(first.id);
    const [before, after] = [manifest(first.id), manifest(s.id)];
    const shas = await heldSha256s(d, user.apiKey);
    const { newOriginals } = expectIncremental(s, before, after, shas, up.body.documents[0].sha256);
    expect(s.originals.copied).toBe(newOriginals.length);
    // Nothing is copied twice into the repository: one object per immutable file.
    expect(readdirSync(join(repo, 'backups')).sort()).toEqual([first.id, s.id].sort());

    // --keep 1 leaves the newest, and the files only the older one used go.
    const kept = await cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--keep', '1', '--json']);
    expect(kept.code, kept.stderr).toBe(0);
    const k = JSON.parse(kept.stdout);
    expect(k.removed_backups.sort()).toEqual([first.id, s.id].sort());
    const list = await cli(['restore', '--from', repo, '--list', '--json', '--key-file', keyFile]);
    expect(JSON.parse(list.stdout)).toMatchObject([{ id: k.id, status: 'complete', key_id: first.key_id }]);
    // What is left in the repository is exactly what the kept backup lists: the files only older ones used are gone.
    const filesUnder = (dir: string) => readdirSync(join(repo, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(repo, join(e.parentPath, e.name)));
    const keptKeys = new Set(manifest(k.id).files.map((f) => f.key));
    // (A backup's own files, such as its index info, are under backups/<id>/, the shared ones under objects/.)
    expect(new Set(filesUnder('objects'))).toEqual(new Set([...keptKeys].filter((key) => key.startsWith('objects/'))));
    for (const key of keptKeys) expect(statSync(join(repo, key)).isFile(), key).toBe(true);
    expect([...before.files, ...after.files].filter((f) => !keptKeys.has(f.key)).length, 'the older backups had files the kept one does not list').toBeGreaterThan(0);
    expect(filesUnder('backups').filter((f) => !f.startsWith(`backups/${k.id}/`)), 'nothing of the removed backups is left').toEqual([]);
  }, 600_000);

  it('a backup killed midway leaves nothing restore accepts; the next run cleans up and completes', async () => {
    const killedRepo = tmp('killed');
    // The backups' own temp folder (TMPDIR), to see what the killed one leaves there: its database snapshot.
    const scratch = tmp('scratch');
    const env = { TMPDIR: scratch };
    const workFolders = () => readdirSync(scratch).filter((n) => n.startsWith('docsearch-backup-'));
    // Slowed down, so that it is still copying when killed.
    const proc = spawn(process.execPath, [BIN, 'backup', '--data-dir', d.dataDir, '--to', killedRepo, '--max-rate', '16k'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    const killed = await new Promise<boolean>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (/^index: /m.test(stderr)) setTimeout(() => proc.kill('SIGKILL'), 1000);
      });
      proc.once('exit', (_code, signal) => resolve(signal === 'SIGKILL'));
    });
    expect(killed, stderr).toBe(true);
    expect(readdirSync(join(killedRepo, 'objects')).length, 'it had started copying').toBeGreaterThan(0);
    expect(workFolders(), 'the killed run left its work folder').toHaveLength(1);

    const target = join(tmp('from-killed'), 'data');
    const id = /^backup (\S+) of /m.exec(stderr)![1]!;
    // Listed as what it is, though it was the repository's first.
    const listed = await cli(['restore', '--from', killedRepo, '--list', '--json', '--key-file', keyFile]);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: 'incomplete', complete: false, problem: expect.stringMatching(/no manifest: it was interrupted, or is still running \(started at /) }]);
    expect((await cli(['restore', '--from', killedRepo, '--list', '--key-file', keyFile])).stdout).toMatch(new RegExp(`^${id}  incomplete +it has no manifest`));
    const none = await cli(['restore', '--from', killedRepo, '--to', target, '--key-file', keyFile]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no complete backup/);
    const named = await cli(['restore', '--from', killedRepo, '--backup', id, '--to', target, '--key-file', keyFile]);
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(/is incomplete: it has no manifest/);

    const again = await runCli(['backup', '--data-dir', d.dataDir, '--to', killedRepo, '--json'], { timeoutMs: 240_000, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/removed the version tags a backup that did not finish left/);
    expect(again.stderr).toMatch(/removed the work folder of a backup that did not finish \(1\)/);
    expect(workFolders(), `nor its own (${readdirSync(scratch).join(', ')})`).toEqual([]);
    const ok = await cli(['restore', '--from', killedRepo, '--to', target, '--key-file', keyFile, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id: JSON.parse(again.stdout).id, verified: true });
  }, 600_000);

  it('Ctrl-C midway stops the backup saying so, and it leaves nothing for the next run to clean up', async () => {
    const stoppedRepo = tmp('interrupted');
    const scratch = tmp('scratch');
    const env = { TMPDIR: scratch };
    const proc = spawn(process.execPath, [BIN, 'backup', '--data-dir', d.dataDir, '--to', stoppedRepo, '--max-rate', '16k'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    let pressed = false;
    const code = await new Promise<number | null>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        // Once: a second Ctrl-C ends the process at once, as it should.
        if (!pressed && /^index: /m.test(stderr)) {
          pressed = true;
          setTimeout(() => proc.kill('SIGINT'), 1000);
        }
      });
      proc.once('close', (exit) => resolve(exit));
    });
    const id = /^backup (\S+) of /m.exec(stderr)![1]!;
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(`backup ${id} was interrupted: it is left incomplete (no manifest), and restore never takes it\nhint: run backup again`);
    expect(readdirSync(join(stoppedRepo, 'objects')).length, 'it had started copying').toBeGreaterThan(0);
    // It took its version tag off the index, its database snapshot and its part-copied file with it.
    expect(readdirSync(scratch).filter((n) => n.startsWith('docsearch-backup-'))).toEqual([]);
    expect(readdirSync(join(stoppedRepo, 'tmp'))).toEqual([]);
    const listed = await cli(['restore', '--from', stoppedRepo, '--list', '--json', '--key-file', keyFile]);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: 'incomplete' }]);
    const again = await runCli(['backup', '--data-dir', d.dataDir, '--to', stoppedRepo, '--json'], { timeoutMs: 240_000, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/removed the version tags a backup that did not finish left|removed the work folder/);
  }, 600_000);

  it('refuses a non-empty target, a damaged file and a manifest of a newer format', async () => {
    const busy = tmp('busy');
    writeFileSync(join(busy, 'something'), 'x');
    const full = await cli(['restore', '--from', repo, '--to', busy, '--key-file', keyFile]);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/is not empty/);
    // Refused, and left as it was: nothing added to it, its file untouched.
    expect(readdirSync(busy)).toEqual(['something']);
    expect(readFileSync(join(busy, 'something'), 'utf8')).toBe('x');

    const id = JSON.parse((await cli(['restore', '--from', repo, '--list', '--json'])).stdout)[0].id as string;
    const m = JSON.parse(readFileSync(join(repo, 'backups', id!, 'manifest.json'), 'utf8'));
    const original = m.files.find((f: { path: string }) => f.path.startsWith('files/'));
    const objectPath = join(repo, original.key);
    const bytes = readFileSync(objectPath);
    writeFileSync(objectPath, Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1)! ^ 1])]));
    const damaged = await cli(['restore', '--from', repo, '--to', join(tmp('damaged'), 'data'), '--key-file', keyFile]);
    writeFileSync(objectPath, bytes);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/checksum mismatch/);

    const manifestPath = join(repo, 'backups', id!, 'manifest.json');
    const text = readFileSync(manifestPath, 'utf8');
    writeFileSync(manifestPath, JSON.stringify({ ...m, format: 99 }));
    const newerTarget = join(tmp('newer'), 'data');
    const newer = await cli(['restore', '--from', repo, '--backup', id!, '--to', newerTarget, '--key-file', keyFile]);
    writeFileSync(manifestPath, text);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toMatch(/backup format 99; this version reads format 2/);
    expect(existsSync(newerTarget), 'nothing was written').toBe(false);
  }, 300_000);
});
