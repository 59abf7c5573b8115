/**
 * What a mutation audit of backup and restore found no test holding (docs/operations.md, "Backup and restore"),
 * through the built binary on backups of a library a real daemon made: restore checks the database snapshot against
 * the manifest like every other file, refuses a file the repository lacks, and checks each index table against the
 * version and row count the manifest names; `--keep N` keeps the N newest backups restorable, and removes nothing
 * while a manifest does not check out; a backup does not take files' hashes from a manifest its key did not seal,
 * copies again what the repository lost since the last one, names the originals the library lost, and fails when a
 * re-index switches the chunk index to a new table after its database snapshot (runBackup's `afterSnapshot` seam).
 */
import { createHash, createHmac } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, runCli, startDaemon } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { reindexFinished, uploadFiles } from '../ingest/pipeline/helpers.js';
import { backupInProcess, takeBackups } from './backup-compare.js';

const NOTES = [
  { name: 'marmots.txt', bytes: Buffer.from('Marmots hibernate in burrows through the long alpine winter.\n') },
  { name: 'tides.txt', bytes: Buffer.from('The moon pulls the oceans, and the tides rise twice a day.\n') },
];

interface Entry {
  path: string;
  key: string;
  size: number;
  sha256: string;
}
type Manifest = Record<string, unknown> & { id: string; files: Entry[]; tables: { name: string; version: number; rows: number }[] };

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('backup and restore: what the mutation audit found untested', () => {
  const dirs = tempDirs('docsearch-backup-mutants');
  let dataDir: string;
  let keyFile: string;
  let repo: string;
  let ids: string[];
  const cli = (args: string[]) => runCli([...args, '--key-file', keyFile], { timeoutMs: 240_000 });
  const manifestPath = (at: string, id: string) => join(at, 'backups', id, 'manifest.json');
  const readManifest = (at: string, id: string) => JSON.parse(readFileSync(manifestPath(at, id), 'utf8')) as Manifest;
  const copyOfRepo = () => {
    const dir = join(dirs.make('repo-copy'), 'repo');
    cpSync(repo, dir, { recursive: true });
    return dir;
  };
  const target = () => join(dirs.make('target'), 'data');
  /** Rewrites a manifest sealed with the backup key, as only a holder of the key (a backup) can. */
  const reseal = (at: string, id: string, m: Manifest) => {
    const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'utf8');
    const text = JSON.stringify({ ...m, checksum: undefined, seal: undefined });
    writeFileSync(manifestPath(at, id), JSON.stringify({ ...m, checksum: sha256(text), seal: createHmac('sha256', key).update(text).digest('hex') }));
  };

  beforeAll(async () => {
    const d = await startDaemon();
    dataDir = d.dataDir;
    dirs.keep(dataDir);
    try {
      const user = await addUser(d);
      const up = await uploadFiles(d, user.apiKey, NOTES, { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
    } finally {
      await d.stop();
    }
    keyFile = join(dataDir, 'backup.key');
    repo = join(dirs.make('repo'), 'repo');
    ids = await takeBackups(dataDir, repo, 2);
  }, 300_000);
  afterAll(() => dirs.removeAll());

  it('a database snapshot altered in the repository is refused, and the target keeps only the record of the restore under way', async () => {
    const damaged = copyOfRepo();
    const file = join(damaged, 'backups', ids[1]!, 'database.sqlite');
    const bytes = readFileSync(file);
    const at = bytes.length >> 1;
    bytes.writeUInt8(bytes.readUInt8(at) ^ 1, at); // the same size: only its hash tells
    writeFileSync(file, bytes);
    const to = target();
    const res = await cli(['restore', '--from', damaged, '--to', to]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`backup ${ids[1]} is damaged: checksum mismatch: ${damaged}/backups/${ids[1]}/database.sqlite`);
    // No library a daemon would serve: the placeholder holding the restore's record, not the altered snapshot.
    const db = new Database(join(to, 'docsearch.db'), { readonly: true });
    try {
      const record = JSON.parse((db.prepare("SELECT value FROM settings WHERE key = 'migration'").get() as { value: string }).value);
      expect(record).toMatchObject({ command: 'restore', state: 'copying' });
    } finally {
      db.close();
    }
  }, 120_000);

  it('an original the manifest lists and the repository lacks is refused, not skipped', async () => {
    const lacking = copyOfRepo();
    const entry = readManifest(lacking, ids[1]!).files.find((f) => f.path.startsWith('files/'))!;
    rmSync(join(lacking, entry.key));
    const to = target();
    const res = await cli(['restore', '--from', lacking, '--to', to]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`backup ${ids[1]} is damaged: ${entry.key} is missing from ${lacking}`);
    expect(existsSync(join(to, 'secrets.key')), 'stopped before the secrets key and the database').toBe(false);
  }, 120_000);

  it('an index table that is not at the version and row count its manifest names is refused', async () => {
    const changed = copyOfRepo();
    const m = readManifest(changed, ids[1]!);
    const [table] = m.tables;
    expect(table!.rows).toBeGreaterThan(0);
    reseal(changed, ids[1]!, { ...m, tables: [{ ...table!, rows: table!.rows + 1 }, ...m.tables.slice(1)] });
    const to = target();
    const res = await cli(['restore', '--from', changed, '--to', to]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`the restored index table ${table!.name} is at version ${table!.version} with ${table!.rows} rows, the backup has version ${table!.version} with ${table!.rows + 1} rows`);
    expect(existsSync(join(to, 'secrets.key')), 'stopped before the secrets key and the database').toBe(false);
  }, 120_000);

  it('--keep 2 removes the oldest backup, and the two it keeps both restore', async () => {
    const kept = copyOfRepo();
    const res = await cli(['backup', '--data-dir', dataDir, '--to', kept, '--keep', '2', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const newest = JSON.parse(res.stdout) as { id: string; removed_backups: string[] };
    expect(newest.removed_backups).toEqual([ids[0]]);
    // The backups before it took their version tags off the index as they ended: none was left for this one to remove.
    expect(res.stderr).not.toMatch(/removed the version tags/);
    const list = await cli(['restore', '--from', kept, '--list', '--json']);
    expect((JSON.parse(list.stdout) as { id: string; status: string }[]).map((b) => [b.id, b.status])).toEqual([
      [ids[1], 'complete'],
      [newest.id, 'complete'],
    ]);
    for (const id of [ids[1]!, newest.id]) {
      const to = target();
      const restored = await cli(['restore', '--from', kept, '--backup', id, '--to', to, '--json']);
      expect(restored.code, `${id}: ${restored.stderr}`).toBe(0);
      expect(JSON.parse(restored.stdout)).toMatchObject({ id, verified: true });
      // The library's secrets key, carried in the backup, is where the restored daemon looks for it.
      expect(readFileSync(join(to, 'secrets.key')).equals(readFileSync(join(dataDir, 'secrets.key'))), 'the secrets key is the library\'s').toBe(true);
      expect(statSync(join(to, 'secrets.key')).mode & 0o777).toBe(0o600);
    }
  }, 180_000);

  it('--keep removes nothing while a backup in the repository does not check out with the key, and says so', async () => {
    const odd = copyOfRepo();
    const text = readFileSync(manifestPath(odd, ids[0]!));
    const at = text.indexOf('"taken_at"') + 20;
    text.writeUInt8(text.readUInt8(at) ^ 1, at);
    writeFileSync(manifestPath(odd, ids[0]!), text);
    const res = await cli(['backup', '--data-dir', dataDir, '--to', odd, '--keep', '1', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).removed_backups).toEqual([]);
    expect(res.stderr).toContain(`retention skipped: backup ${ids[0]} is damaged (its manifest does not match its checksum); see docsearch restore --list`);
    const list = await cli(['restore', '--from', odd, '--list', '--json']);
    expect((JSON.parse(list.stdout) as { id: string; status: string }[]).map((b) => [b.id, b.status])).toEqual([
      [ids[0], 'damaged'],
      [ids[1], 'complete'],
      [JSON.parse(res.stdout).id, 'complete'],
    ]);
    const older = await cli(['restore', '--from', odd, '--backup', ids[1]!, '--to', target()]);
    expect(older.code, older.stderr).toBe(0);
  }, 180_000);

  it("a backup takes no file's hash from a newer manifest its key did not seal", async () => {
    const forged = copyOfRepo();
    // The newest manifest rewritten unsealed (format 1, as whoever can write the repository can), the hash of an index
    // file the last sealed backup has too changed: the next backup must not seal it.
    const { key_id: _k, seal: _s, checksum: _c, ...m } = readManifest(forged, ids[1]!);
    const entry = m.files.find((f) => f.path.startsWith('lancedb/') && f.key.startsWith('objects/'))!;
    const other = sha256(`${entry.sha256} forged`);
    const body = { ...m, format: 1, files: m.files.map((f) => (f === entry ? { ...f, sha256: other } : f)) };
    writeFileSync(manifestPath(forged, ids[1]!), JSON.stringify({ ...body, checksum: sha256(JSON.stringify({ ...body, checksum: undefined, seal: undefined })) }));
    const res = await cli(['backup', '--data-dir', dataDir, '--to', forged, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout) as { id: string; based_on: string };
    expect(res.stderr).toContain(`note: backup ${ids[1]} is unsealed: `);
    expect(res.stderr).toContain(`this one copies every file ${ids[0]} does not have`);
    expect(s.based_on).toBe(ids[0]);
    const listed = readManifest(forged, s.id).files.find((f) => f.path === entry.path)!;
    expect(listed.sha256, 'the hash of the bytes in the library').toBe(sha256(readFileSync(join(dataDir, entry.path))));
  }, 120_000);

  it('a file the last backup lists and the repository has lost is copied again by the next, which restores', async () => {
    const lost = copyOfRepo();
    const entry = readManifest(lost, ids[1]!).files.find((f) => f.path.startsWith('files/'))!;
    rmSync(join(lost, entry.key));
    const res = await cli(['backup', '--data-dir', dataDir, '--to', lost, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout) as { id: string; based_on: string };
    expect(s.based_on).toBe(ids[1]);
    expect(readFileSync(join(lost, entry.key)).equals(readFileSync(join(dataDir, entry.path)))).toBe(true);
    const restored = await cli(['restore', '--from', lost, '--backup', s.id, '--to', target()]);
    expect(restored.code, restored.stderr).toBe(0);
  }, 120_000);

  it('an original the library has lost is named by the backup, in a warning, its summary and its manifest; its restore warns too', async () => {
    const copy = join(dirs.make('lost-original'), 'data');
    cpSync(dataDir, copy, { recursive: true });
    const lost = sha256(NOTES[0]!.bytes);
    rmSync(join(copy, 'files', lost.slice(0, 2), lost));
    const into = join(dirs.make('lost-original-repo'), 'repo');
    const res = await runCli(['backup', '--data-dir', copy, '--to', into, '--json'], { timeoutMs: 240_000 });
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout) as { id: string; originals: { total: number; missing: string[] } };
    expect(s.originals).toMatchObject({ total: NOTES.length, missing: [lost] });
    expect(readManifest(into, s.id).missing_originals).toEqual([lost]);
    expect(res.stderr).toContain(`warning: original ${lost} is missing in the library (its documents deleted while the backup ran, or the file lost): the backup holds its documents without it`);
    const restored = await runCli(['restore', '--from', into, '--to', target(), '--key-file', join(copy, 'backup.key')], { timeoutMs: 240_000 });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toContain(`warning: original ${lost} was missing in the library when backup ${s.id} was taken: its documents are restored without it`);
  }, 120_000);
});

describe('a re-index that switches the chunk index to a new table between the database snapshot and the index pin', () => {
  const dirs = tempDirs('docsearch-backup-reindexed');

  afterAll(() => dirs.removeAll());

  it('fails the backup, saying to run it again once the re-index is finished; run again, it completes', async () => {
    let d = await startDaemon();
    const dataDir = d.dataDir;
    dirs.keep(dataDir);
    const user = await addUser(d);
    try {
      const up = await uploadFiles(d, user.apiKey, [NOTES[0]!], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      await d.stop();
      // An index built with another embedder (as test/ingest/pipeline/reindex.test.ts makes one): a re-index is due.
      const infoFile = join(dataDir, 'lancedb', 'chunks-index.json');
      writeFileSync(infoFile, JSON.stringify({ ...JSON.parse(readFileSync(infoFile, 'utf8')), embedderId: 'ollama:old-model' }));
      d = await startDaemon({ dataDir });
      const daemon = d;
      const repoDir = join(dirs.make('repo'), 'repo');
      const keyFile = join(dirs.make('key'), 'backup.key');
      const failed = await backupInProcess(dataDir, repoDir, keyFile, async () => {
        const started = await api(daemon, '/api/v1/reindex', { method: 'POST', token: user.apiKey });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        await reindexFinished(daemon, user.apiKey);
      });
      expect(failed?.message).toBe('a re-index switched the chunk index to a new table while the backup ran');
      expect(failed?.hint).toBe('run the backup again once the re-index is finished');
      const again = await runCli(['backup', '--data-dir', dataDir, '--to', repoDir, '--key-file', keyFile, '--json'], { timeoutMs: 240_000 });
      expect(again.code, again.stderr).toBe(0);
    } finally {
      await d.stop();
    }
  }, 300_000);
});
