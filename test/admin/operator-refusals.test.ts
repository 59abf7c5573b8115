/**
 * docs/operations.md and docs/migrate.md: `backup`, `restore` and `migrate` refuse a location that can never work (a
 * malformed s3:// or database URL, a URL where a directory belongs, a path through a file, a directory to read from
 * that is not there, a backup inside the library it copies, one library inside the other's data directory) with
 * exit 2, naming the option, before any key, lock, folder or file is made. One process per case, against a real
 * library made by `users add --init`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, runCli } from '../helpers/daemon.js';
import { pooled } from '../helpers/pooled.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-operator-refusals-'));
// `migrate --to postgres://` (or s3://…) was once taken as a relative path: the folder "postgres:" here.
const urlFolders = ['postgres:', 's3:'].map((name) => resolve(name)).filter((path) => !existsSync(path));
afterAll(() => {
  removeDir(dir);
  for (const path of urlFolders) rmSync(path, { recursive: true, force: true });
});

const lib = join(dir, 'library');
const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'not a directory\n');
const emptyRepo = join(dir, 'empty-repository');
mkdirSync(emptyRepo);
const bucketName = '"" is not a valid bucket name (3–63 lowercase letters, digits, dots, hyphens)';

/** [args, env, the error line after `error: `] */
const cases: [string[], Record<string, string>, string][] = [
  [['backup', '--data-dir', lib, '--to', 's3://'], {}, `--to: ${bucketName}`],
  [['backup', '--data-dir', lib, '--to', 'ftp://files.example.com/backups'], {}, '--to: unsupported backup location "ftp://files.example.com/backups": a directory or s3://bucket/prefix'],
  [['backup', '--data-dir', lib, '--to', aFile], {}, `--to: ${aFile} is not a directory`],
  [['backup', '--data-dir', lib, '--to', join(aFile, 'backups')], {}, `--to: ${aFile} is not a directory`],
  [['backup', '--data-dir', lib, '--to', join(lib, 'backups')], {}, `--to: ${join(lib, 'backups')} is inside the data directory ${lib}: keep the backups apart from the library they are to outlive`],
  [['backup', '--data-dir', lib, '--to', join(dir, 'repo'), '--key-file', join(aFile, 'backup.key')], {}, `--key-file: ${aFile} is not a directory`],
  [['backup', '--data-dir', lib, '--to', join(dir, 'repo'), '--key-file', join(dir, 'no-dir', 'backup.key')], {}, `--key-file: there is no directory ${join(dir, 'no-dir')} to make ${join(dir, 'no-dir', 'backup.key')} in`],
  [['backup', '--data-dir', lib, '--to', join(dir, 'repo')], { DOCSEARCH_BACKUP_KEY_FILE: emptyRepo }, `DOCSEARCH_BACKUP_KEY_FILE: ${emptyRepo} is a directory, not a file`],
  [['restore', '--from', join(dir, 'bakcups'), '--list'], {}, `--from: there is no directory ${join(dir, 'bakcups')}`],
  [['restore', '--from', aFile, '--to', join(dir, 'restored')], {}, `--from: ${aFile} is not a directory`],
  [['restore', '--from', 's3://', '--list'], {}, `--from: ${bucketName}`],
  [['restore', '--from', emptyRepo, '--to', join(dir, 'restored'), '--key-file', join(dir, 'no-key')], {}, `--key-file: there is no file ${join(dir, 'no-key')}`],
  [['restore', '--from', emptyRepo, '--to', join(aFile, 'restored')], {}, `--to: ${aFile} is not a directory`],
  [['restore', '--from', emptyRepo, '--database', 'postgres://', '--storage', 's3://library/restored'], {}, '--database names no host: "postgres://"'],
  [['restore', '--from', emptyRepo, '--database', 'postgres://db.example.com/docs', '--storage', 's3://'], {}, `--storage: ${bucketName}`],
  [['migrate', '--from', join(dir, 'no-library'), '--to', join(dir, 'moved')], {}, `--from: there is no directory ${join(dir, 'no-library')}`],
  [['migrate', '--from', aFile, '--to', join(dir, 'moved')], {}, `--from: ${aFile} is not a directory`],
  [['migrate', '--from', 'postgres://db.example.com/docs', '--to', join(dir, 'moved')], {}, '--from takes a data directory; a database URL goes in --from-database (with --from-storage s3://bucket/prefix)'],
  [['migrate', '--from', lib, '--to', 'postgres://'], {}, '--to takes a data directory; a database URL goes in --to-database, and this one names no host: "postgres://"'],
  [['migrate', '--from', lib, '--to', 's3://library/moved'], {}, '--to takes a data directory, not "s3://library/moved": storage goes in --to-storage s3://bucket/prefix, a database in --to-database'],
  [['migrate', '--from', lib, '--to', join(aFile, 'moved')], {}, `--to: ${aFile} is not a directory`],
  [['migrate', '--from', lib, '--to', join(lib, 'moved')], {}, `--from ${lib} and --to ${join(lib, 'moved')} are inside one another: give each library a data directory of its own`],
  [['migrate', '--from', lib, '--to', dir], {}, `--from ${lib} and --to ${dir} are inside one another: give each library a data directory of its own`],
];

/** Every path under `root`, sorted: what a refused command must leave as it was. */
function tree(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
}

describe('backup, restore and migrate with a location that can never work', () => {
  it('exit 2 naming the option, and make nothing', { timeout: 60_000 }, async () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'no-config'), DOCSEARCH_BACKUP_KEY_FILE: '' };
    const init = await runCli(['users', 'add', 'ann@example.com', '--data-dir', lib, '--init'], { input: 'a long enough password\n', env });
    expect(init.code, init.stderr).toBe(0);
    const before = tree(dir);
    const runs = await pooled(cases, 2, ([args, caseEnv]) => runCli(args, { env: { ...env, ...caseEnv } }));
    runs.forEach((run, i) => {
      const [args, , said] = cases[i]!;
      expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(`error: ${said}\n`);
    });
    expect(tree(dir)).toEqual(before);
    expect(urlFolders.filter((path) => existsSync(path))).toEqual([]);
  });
});
