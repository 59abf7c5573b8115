/**
 * The folders an operator points `backup --to` and `restore --to` at (docs/operations.md, "Backup and restore"): a
 * backup is not written among other files — a folder that holds some and is not a backup repository is refused, exit 2,
 * before anything is made (not even the backup key) — while a repository is used whatever the operator put beside it;
 * and a fresh mount point, whose only entry is the file system's `lost+found`, is empty to both; a `restore --to` or
 * `migrate --to` on a read-only file system is refused before anything is done, saying so (as `backup --to` is:
 * restore-probe.test.ts). The library is made by `users add --init`: no daemon is needed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { mountTmpfs, unmount } from '../helpers/fill-disk.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/** A folder made to look like an ext4 file system's root just mounted: `lost+found` and nothing else. */
function freshMount(dir: string): string {
  mkdirSync(join(dir, 'lost+found'), { recursive: true, mode: 0o700 });
  return dir;
}

describe('the folders backup, restore and migrate are pointed at: new, empty, a mount point, one of other files, read-only', () => {
  const dirs = tempDirs('docsearch-backup-folders');
  let library: string;
  const keyFile = () => join(library, 'backup.key');
  const backup = (to: string, json = false) => runCli(['backup', '--data-dir', library, '--to', to, ...(json ? ['--json'] : [])], { timeoutMs: 120_000 });

  beforeAll(async () => {
    library = join(dirs.make('library'), 'data');
    const made = await runCli(['users', 'add', 'ann@example.com', '--data-dir', library, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
  }, 120_000);
  const mounts: string[] = [];
  afterAll(() => {
    for (const dir of mounts) unmount(dir);
    dirs.removeAll();
  });

  it('backup --to a folder holding other files is refused before anything is written, the key included', async () => {
    const folder = dirs.make('documents');
    writeFileSync(join(folder, 'tax-2025.pdf'), 'not a backup');
    mkdirSync(join(folder, 'photos'));
    const res = await backup(folder);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(`error: --to: ${folder} holds other files (photos, tax-2025.pdf) and is not a backup repository (it has no backups/ folder)`);
    expect(res.stderr).toContain('hint: name a new or empty directory for the backups');
    expect(readdirSync(folder).sort()).toEqual(['photos', 'tax-2025.pdf']);
    expect(existsSync(keyFile()), 'no backup key was made').toBe(false);
  });

  it('a fresh mount point takes the first backup; the repository, with a note put beside it, takes the next', async () => {
    const mount = freshMount(dirs.make('backup-mount'));
    const first = await backup(mount, true);
    expect(first.code, first.stderr).toBe(0);
    expect(readdirSync(join(mount, 'backups'))).toEqual([JSON.parse(first.stdout).id]);
    writeFileSync(join(mount, 'README.txt'), 'docsearch backups: restore with docsearch restore --from this folder\n');
    const next = await backup(mount, true);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout).based_on).toBe(JSON.parse(first.stdout).id);
  });

  it('a folder holding only the backup key --key-file names (made by a first run that stopped) takes the first backup', async () => {
    const folder = dirs.make('key-beside');
    const key = join(folder, 'backup.key');
    writeFileSync(key, `${'k'.repeat(64)}\n`, { mode: 0o600 });
    const res = await runCli(['backup', '--data-dir', library, '--to', folder, '--key-file', key], { timeoutMs: 120_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(['backup.key', 'backups', 'tmp']);
  });

  it('restore --to a fresh mount point restores into it; a folder holding files is refused, naming them', async () => {
    const repo = join(dirs.make('repo'), 'repo');
    const taken = await backup(repo);
    expect(taken.code, taken.stderr).toBe(0);
    const mount = freshMount(dirs.make('restore-mount'));
    const res = await runCli(['restore', '--from', repo, '--key-file', keyFile(), '--to', mount, '--json'], { timeoutMs: 120_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ to: mount, verified: true });
    expect(readdirSync(mount)).toEqual(expect.arrayContaining(['docsearch.db', 'lost+found']));
    const users = await runCli(['users', 'list', '--json', '--data-dir', mount]);
    expect(JSON.parse(users.stdout).users.map((u: { email: string }) => u.email)).toEqual(['ann@example.com']);

    const busy = freshMount(dirs.make('busy'));
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) writeFileSync(join(busy, name), name);
    const refused = await runCli(['restore', '--from', repo, '--key-file', keyFile(), '--to', busy], { timeoutMs: 120_000 });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`error: ${busy} is not empty (it holds a.txt, b.txt, c.txt and 1 more)`);
    expect(readdirSync(busy).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'lost+found']);
  });

  it('restore --to and migrate --to on a read-only file system: refused at once, exit 2, saying so', async (ctx) => {
    const ro = dirs.make('read-only');
    const skip = mountTmpfs(ro, 16);
    if (skip) return ctx.skip(skip);
    mounts.push(ro);
    execFileSync('mount', ['-o', 'remount,ro', ro], { stdio: 'pipe' });
    const repo = join(dirs.make('ro-repo'), 'repo');
    const taken = await backup(repo);
    expect(taken.code, taken.stderr).toBe(0);
    for (const [args, hint] of [
      [['restore', '--from', repo, '--key-file', keyFile(), '--to', join(ro, 'data')], 'restore into a directory on a writable disk'],
      [['migrate', '--from', library, '--to', join(ro, 'data')], 'copy into a directory on a writable disk'],
    ] as const) {
      const res = await runCli([...args], { timeoutMs: 120_000 });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`error: --to: ${join(ro, 'data')} cannot be written: ${ro} is on a read-only file system\nhint: ${hint}`);
    }
  });
});
