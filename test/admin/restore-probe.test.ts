/**
 * Backup and restore against outages, through the built binary on a library a real daemon serves: a restore that
 * stops midway (a damaged file here; a kill -9 or a full disk leave the same) leaves a target no daemon serves, and
 * the same restore run again finishes it; a target whose disk cannot hold the backup, a repository on a read-only
 * or full file system are refused saying so, with nothing made that a later run could mistake for whole; a manifest
 * listing a file twice, or a file where another entry needs a folder, is refused (one of the two would be skipped).
 * (restore-refusals.test.ts: what restore refuses of a repository someone else wrote to; restore-shared-refusals.test.ts:
 * a shared-mode prefix holding another library's secrets key.)
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { mountTmpfs, unmount } from '../helpers/fill-disk.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { takeBackups } from './backup-compare.js';

const NOTES = [
  { name: 'marmots.txt', bytes: Buffer.from('Marmots hibernate in burrows through the long alpine winter.\n') },
  { name: 'tides.txt', bytes: Buffer.from('The moon pulls the oceans, and the tides rise twice a day.\n') },
  // 4 MB the disks below cannot hold: a PDF that does not parse fails at once, and its original is kept (and backed up).
  { name: 'damaged.pdf', bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(4 * 1024 * 1024)]) },
];
/** A backup's manifest as it lies in the repository. */
const readManifestFile = (repo: string, id: string) => JSON.parse(readFileSync(join(repo, 'backups', id, 'manifest.json'), 'utf8')) as { files: { path: string }[] };

describe('docsearch backup and restore under outages', () => {
  let d: Daemon;
  let user: TestUser;
  const dirs = tempDirs('docsearch-restore-probe');
  let repo: string;
  let keyFile: string;
  let ids: string[];
  const mounts: string[] = [];
  const cli = (args: string[]) => runCli([...args, '--key-file', keyFile], { timeoutMs: 240_000 });
  /** An empty tmpfs of `mb` MiB: its folder, or why none can be mounted (the test skips, saying so). */
  const tmpfs = (mb: number): { dir: string; skip: string | null } => {
    const dir = dirs.make('tmpfs');
    const skip = mountTmpfs(dir, mb);
    if (!skip) mounts.push(dir);
    return { dir, skip };
  };
  const documentNames = async (daemon: Daemon) => {
    const res = await api(daemon, '/api/v1/documents', { token: user.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.documents as { filename: string }[]).map((x) => x.filename).sort();
  };

  beforeAll(async () => {
    d = await startDaemon();
    dirs.keep(d.dataDir);
    user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, NOTES, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    repo = join(dirs.make('repo'), 'repo');
    keyFile = join(d.dataDir, 'backup.key');
    ids = await takeBackups(d.dataDir, repo, 2);
  }, 600_000);
  afterAll(async () => {
    await d?.stop();
    for (const dir of mounts) unmount(dir);
    dirs.removeAll();
  });

  it('a restore stopped midway leaves a target no daemon serves; the same restore run again finishes it, another is refused', async () => {
    const [older, newest] = ids as [string, string];
    const damaged = join(dirs.make('damaged'), 'repo');
    cpSync(repo, damaged, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(damaged, 'backups', newest, 'manifest.json'), 'utf8')) as { files: { path: string; key: string }[] };
    const object = join(damaged, manifest.files.find((f) => f.path.startsWith('files/'))!.key);
    const bytes = readFileSync(object);
    writeFileSync(object, Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1)! ^ 1])]));

    const target = join(dirs.make('target'), 'data');
    const stopped = await cli(['restore', '--from', damaged, '--to', target]);
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stderr).toMatch(/checksum mismatch/);
    expect(readdirSync(target).length, 'it stopped midway, with files placed').toBeGreaterThan(0);

    // A daemon started on it (a service manager's restart) refuses the half-restored library, naming the restore to run.
    const refused = await startDaemon({ dataDir: target, timeoutMs: 120_000 }).then(
      async (daemon) => {
        await daemon.stop();
        return null;
      },
      (err: Error) => err,
    );
    expect(String(refused), 'a daemon served the half-restored target as a new library').toMatch(new RegExp(`still being copied in from backup ${newest} of .*: run that \`docsearch restore\` again to finish it`));

    // Another backup is not restored over it.
    const other = await cli(['restore', '--from', repo, '--backup', older, '--to', target]);
    expect(other.code, other.stderr).toBe(1);
    expect(other.stderr).toContain(`error: ${target} holds an unfinished restore of backup ${newest} of `);

    // The file put right (another copy of the repository), the same restore goes on and finishes.
    writeFileSync(object, bytes);
    const again = await cli(['restore', '--from', damaged, '--to', target, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: newest, verified: true });
    const restored = await startDaemon({ dataDir: target, timeoutMs: 120_000 });
    try {
      expect(await documentNames(restored)).toEqual(NOTES.map((n) => n.name).sort());
    } finally {
      await restored.stop();
    }
  }, 600_000);

  it('a manifest listing a file twice, or a file where another entry needs a folder, is refused on --trust-repository too; keys such as __proto__ place nothing', async () => {
    const id = ids[1]!;
    type Entry = { path: string; key: string; size: number; sha256: string };
    /** A copy of the repository whose manifest is rewritten unsealed, as whoever can write it can (format 1: a checksum anyone can recompute). */
    const forge = (change: (m: { files: Entry[] } & Record<string, unknown>, repo: string) => object) => {
      const forged = join(dirs.make('forged'), 'repo');
      cpSync(repo, forged, { recursive: true });
      const at = join(forged, 'backups', id, 'manifest.json');
      const { key_id: _k, seal: _s, checksum: _c, ...m } = JSON.parse(readFileSync(at, 'utf8')) as { files: Entry[] } & Record<string, unknown>;
      const body = { ...change(m, forged), format: 1 };
      const text = JSON.stringify({ ...body, checksum: createHash('sha256').update(JSON.stringify({ ...body, checksum: undefined, seal: undefined })).digest('hex') });
      writeFileSync(at, text);
      return forged;
    };
    const restoreTrusted = (forged: string, target: string) => cli(['restore', '--from', forged, '--backup', id, '--to', target, '--trust-repository']);

    const twice = forge((m) => ({ ...m, files: [...m.files, m.files[0]!] }));
    // The table's folder listed as a file too, its bytes those of one of its files: every entry checks out alone.
    let table = '';
    const folder = forge((m, forged) => {
      const inTable = m.files.find((f) => /^lancedb\/[^/]+\.lance\/.+/.test(f.path))!;
      table = inTable.path.split('/').slice(0, 2).join('/');
      cpSync(join(forged, inTable.key), join(forged, 'backups', id, table));
      return { ...m, files: [...m.files, { ...inTable, path: table, key: `backups/${id}/${table}` }] };
    });
    for (const [forged, said] of [
      [twice, `its manifest lists ${readManifestFile(repo, id).files[0]!.path} twice`],
      [folder, `its manifest lists ${table} both as a file and as the folder of lancedb/`],
    ] as const) {
      const target = join(dirs.make('forged-target'), 'data');
      const res = await restoreTrusted(forged, target);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(`backup ${id} in ${forged} is damaged: ${said}`);
      expect(existsSync(target), 'nothing was made').toBe(false);
    }

    // JSON.parse makes "__proto__" an own key, never a prototype: its files are none of the manifest's.
    const proto = forge((m) => JSON.parse(JSON.stringify(m).replace('{', '{"__proto__":{"files":[{"path":"../../escaped"}],"format":9},"constructor":{"prototype":{"path":"../x"}},')));
    const base = dirs.make('proto-target');
    const res = await restoreTrusted(proto, join(base, 'data'));
    expect(res.code, res.stderr).toBe(0);
    expect(readdirSync(base)).toEqual(['data']);
    expect(existsSync(join(base, '..', 'escaped'))).toBe(false);
  }, 300_000);

  it('a target whose disk cannot hold the backup is refused before anything is made', async (ctx) => {
    const { dir, skip } = tmpfs(2);
    if (skip) return ctx.skip(skip);
    const target = join(dir, 'data');
    const res = await cli(['restore', '--from', repo, '--to', target]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`error: ${target} has [12]\\.\\d MB free, and backup ${ids[1]} of \\S+ needs [4-9]\\.\\d MB there\\n`));
    expect(res.stderr).toContain('nothing was changed');
    expect(readdirSync(dir), 'nothing was made').toEqual([]);
  }, 300_000);

  it('a repository on a read-only file system is refused before the key is made; on a full one the backup says so and is left incomplete', async (ctx) => {
    const ro = tmpfs(2);
    if (ro.skip) return ctx.skip(ro.skip);
    execFileSync('mount', ['-o', 'remount,ro', ro.dir], { stdio: 'pipe' });
    const newKey = join(dirs.make('key'), 'backup.key');
    const refused = await runCli(['backup', '--data-dir', d.dataDir, '--to', join(ro.dir, 'repo'), '--key-file', newKey], { timeoutMs: 240_000 });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`error: --to: ${join(ro.dir, 'repo')} cannot be written: ${ro.dir} is on a read-only file system`);
    expect(existsSync(newKey), 'no key was made').toBe(false);

    const full = tmpfs(2);
    if (full.skip) return ctx.skip(full.skip);
    const fullRepo = join(full.dir, 'repo');
    const res = await cli(['backup', '--data-dir', d.dataDir, '--to', fullRepo]);
    expect(res.code, res.stderr).toBe(1);
    const id = /^error: out of disk space while taking backup (\S+): ENOSPC: no space left on device/m.exec(res.stderr)?.[1];
    expect(id, res.stderr).toBeTruthy();
    expect(res.stderr).toContain(`hint: the backup is left incomplete, and restore never takes it: free space in ${fullRepo}`);
    const listed = await cli(['restore', '--from', fullRepo, '--list', '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: 'incomplete', complete: false }]);
  }, 300_000);
});
