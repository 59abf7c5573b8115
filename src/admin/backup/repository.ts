/**
 * Where backups are kept (`--to` of `backup`, `--from` of `restore`): a directory or `s3://bucket/prefix`, as an
 * object store. Immutable files (originals, the index's data and index files) are stored once under `objects/`
 * and shared by every backup that has them, so a run copies only what the last one lacks; each backup keeps its
 * database snapshot and manifest under `backups/<id>/`, a note that it started first and the manifest last
 * (manifest.ts has the layout).
 */
import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError, UsageError } from '../../terminal/errors.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, parseS3Location, type S3Location, StorageConfigError } from '../../store/objects/location.js';
import { directoryToMake, existingDirectory, looksLikeUrl } from '../option-paths.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import type { BackupKey } from './backup-key.js';
import { entriesOf, someOf } from './folder-entries.js';
import { notWritable } from './not-writable.js';
import { storageUnreachable } from '../migrate/unreachable.js';
import { type BackupManifest, checkManifest, manifestKey, type ManifestStatus, startedKey } from './manifest.js';

export interface Repository {
  store: ObjectStore;
  /** A local folder for files on their way in or out (on the repository's file system when it is a directory). */
  tmpDir: string;
  close(): void;
}

const NO_BACKUP_HINT = 'check --from: it is the directory or s3://bucket/prefix that `docsearch backup --to` wrote (it holds backups/<id>/…); nothing was changed';

/** What `restore` says of an address where it finds no backup: a typo in --from, or a backup that never ran there. */
export const noBackupAt = (where: string, why?: string): CliError => new CliError(`no backup found at ${where}${why ? `: ${why}` : ''}`, 1, NO_BACKUP_HINT);

/** A repository as its option names it, checked before anything is made: an S3 prefix, or a directory. */
export type RepositoryLocation = { kind: 's3'; s3: S3Location } | { kind: 'directory'; dir: string };

/**
 * Checks `--to` of `backup` (`create`: a missing directory is made) or `--from` of `restore` (the directory must be
 * there: only `backup` makes a repository); a location that can never work is a usage error naming `option`. The
 * commands call it first, before anything is made; openRepository checks again.
 */
export function repositoryLocation(option: string, location: string, env: NodeJS.ProcessEnv, opts: { create: boolean }): RepositoryLocation {
  if (location.startsWith('s3://')) {
    try {
      return { kind: 's3', s3: parseS3Location(location, env) };
    } catch (err) {
      if (err instanceof StorageConfigError) throw new UsageError(`${option}: ${err.message}`);
      throw err;
    }
  }
  if (looksLikeUrl(location)) throw new UsageError(`${option}: unsupported backup location "${location}": a directory or s3://bucket/prefix`);
  if (!opts.create) return { kind: 'directory', dir: existingDirectory(option, location, NO_BACKUP_HINT) };
  const dir = directoryToMake(option, location);
  const unwritable = notWritable(dir);
  if (unwritable) throw new UsageError(`${option}: ${dir} cannot be written: ${unwritable}`);
  return { kind: 'directory', dir };
}

/** What a repository holds (manifest.ts), beside which an earlier run that stopped at once may have left only `tmp/`. */
const REPOSITORY_ENTRIES = new Set(['backups', 'objects', 'tmp']);

/**
 * Refuses a `--to` directory that holds other files and is not a backup repository: backups written among them would
 * be mixed with someone else's files. New, empty (a file system's `lost+found` aside) or a repository (it has
 * `backups/`, whatever the operator put beside it) is taken, and so is one holding the backup key (`keyFile`) beside
 * those. `backup` calls it once, before anything is made.
 */
export function refuseForeignFolder(option: string, dir: string, keyFile: string): void {
  const names = entriesOf(dir);
  if (names.includes('backups') && statSync(join(dir, 'backups'), { throwIfNoEntry: false })?.isDirectory()) return;
  // The backup key, when the operator keeps it there, was made by a first run that stopped before writing a backup.
  const others = names.filter((n) => !REPOSITORY_ENTRIES.has(n) && join(dir, n) !== resolve(keyFile));
  if (others.length === 0) return;
  throw new UsageError(
    `${option}: ${dir} holds other files (${someOf(others)}) and is not a backup repository (it has no backups/ folder)`,
    'name a new or empty directory for the backups (a new folder inside this one will do), or the repository earlier backups went to; nothing was written',
  );
}

/** A missing directory is made for a backup; to read (`create: false`, restore) it is an error, and nothing is made. */
export async function openRepository(location: string, env: NodeJS.ProcessEnv, opts = { create: true }): Promise<Repository> {
  const where = repositoryLocation(opts.create ? '--to' : '--from', location, env, opts);
  if (where.kind === 's3') {
    const { S3ObjectStore } = await import('../../store/objects/s3.js');
    const store = await S3ObjectStore.connect(where.s3);
    return { store, tmpDir: tmpdir(), close: () => store.close() };
  }
  const tmpDir = join(where.dir, 'tmp');
  if (opts.create) await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  // Regular files only: whoever can write the repository must not make a restore read a device, a FIFO or a link.
  return { store: new LocalObjectStore(where.dir, { regularFilesOnly: true }), tmpDir, close: () => undefined };
}

export const describeRepository = (location: string, env: NodeJS.ProcessEnv): string => (location.startsWith('s3://') ? describeS3(parseS3Location(location, env)) : resolve(location));

export interface BackupEntry {
  id: string;
  /** `incomplete`: no manifest (a run that was interrupted, or is still running). */
  status: ManifestStatus | 'incomplete';
  /** Vouched for only when `status` is `complete` (or `unsealed`, by whoever trusts the repository). */
  manifest: BackupManifest | null;
  problem?: string;
}

/** Every backup in the repository, complete or not, oldest first (ids sort by time); `key` checks the seals. */
export async function listBackups(repo: Repository, key: BackupKey | null): Promise<BackupEntry[]> {
  const ids = new Set<string>();
  try {
    for await (const k of repo.store.list('backups/')) {
      const parts = k.split('/');
      if (parts.length >= 3) ids.add(parts[1]!);
    }
  } catch (err) {
    if ((err as { name?: unknown }).name === 'NoSuchBucket') throw noBackupAt(repo.store.location, 'there is no such bucket');
    throw repo.store.engine === 's3' ? storageUnreachable('the repository', repo.store.location, err) : err;
  }
  const out: BackupEntry[] = [];
  for (const id of [...ids].sort()) out.push(await readBackup(repo, id, key));
  return out;
}

/** Whether the repository holds anything of backup `id`. */
export async function backupExists(repo: Repository, id: string): Promise<boolean> {
  for await (const _ of repo.store.list(`backups/${id}/`)) return true;
  return false;
}

/** Backup `id` as its manifest shows it (`incomplete` when it has none). */
export async function readBackup(repo: Repository, id: string, key: BackupKey | null): Promise<BackupEntry> {
  let bytes: Buffer | null;
  try {
    bytes = await repo.store.get(manifestKey(id));
  } catch (err) {
    return { id, status: 'damaged', manifest: null, problem: `its manifest cannot be read: ${(err as Error).message}` };
  }
  if (!bytes) {
    const started = await repo.store.head(startedKey(id)).catch(() => null);
    const since = started ? ` (started at ${started.modified.toISOString()})` : '';
    return { id, status: 'incomplete', manifest: null, problem: `it has no manifest: it was interrupted, or is still running${since}` };
  }
  return { id, ...checkManifest(bytes.toString('utf8'), id, key) };
}

/** Whether `restore` takes the backup: sealed with the key given, or, trusting the repository, sealed with none it can check. */
export const restorable = (b: BackupEntry, trustRepository: boolean): boolean =>
  b.status === 'complete' || (trustRepository && (b.status === 'unsealed' || b.status === 'unchecked' || b.status === 'other-key'));

/** What `restore` says of a backup it does not take, and what would make it take one. */
export function refusal(b: BackupEntry, where: string): CliError {
  const what = `backup ${b.id} in ${where}`;
  switch (b.status) {
    case 'incomplete':
      return new CliError(`${what} is incomplete: ${b.problem}`, 1, 'restore a complete one (docsearch restore --list)');
    case 'newer':
      return new CliError(`${what} cannot be read: ${b.problem}`, 1, 'restore it with that docsearch or later');
    case 'unchecked':
      return new CliError(`${what} cannot be checked: ${b.problem}`, 1, 'name the key file backup sealed it with: --key-file FILE (or DOCSEARCH_BACKUP_KEY_FILE); embedded, backup keeps it as backup.key in the data directory');
    case 'other-key':
      return new CliError(`${what} cannot be checked: ${b.problem}`, 1, 'name the key file backup sealed it with (--key-file); if that key is lost, --trust-repository restores it unchecked');
    case 'unsealed':
      return new CliError(`${what} is not sealed: ${b.problem}`, 1, 'if nobody else can have written to the repository, restore it with --trust-repository');
    default:
      return new CliError(`${what} is damaged: ${b.problem}`, 1, 'restore another backup (docsearch restore --list)');
  }
}
