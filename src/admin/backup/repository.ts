/**
 * Where backups are kept (`--to` of `backup`, `--from` of `restore`): a directory or `s3://bucket/prefix`, as an
 * object store. Immutable files (originals, the index's data and index files) are stored once under `objects/`
 * and shared by every backup that has them, so a run copies only what the last one lacks; each backup keeps its
 * database snapshot and manifest under `backups/<id>/`, the manifest written last.
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError, UsageError } from '../../terminal/errors.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, parseS3Location, StorageConfigError } from '../../store/objects/location.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { type BackupManifest, openManifest } from './manifest.js';

export interface Repository {
  store: ObjectStore;
  /** A local folder for files on their way in or out (on the repository's file system when it is a directory). */
  tmpDir: string;
  close(): void;
}

const MANIFEST = /^backups\/([^/]+)\/manifest\.json$/;

export const manifestKey = (id: string): string => `backups/${id}/manifest.json`;
export const databaseKey = (id: string): string => `backups/${id}/database.sqlite`;
/** Immutable files by their place in the library; mutable ones (the index info) per backup. */
export const objectKey = (path: string): string => `objects/${path}`;
export const ownKey = (id: string, path: string): string => `backups/${id}/${path}`;

export async function openRepository(location: string, env: NodeJS.ProcessEnv): Promise<Repository> {
  if (location.startsWith('s3://')) {
    let loc;
    try {
      loc = parseS3Location(location, env);
    } catch (err) {
      if (err instanceof StorageConfigError) throw new UsageError(err.message);
      throw err;
    }
    const { S3ObjectStore } = await import('../../store/objects/s3.js');
    const store = await S3ObjectStore.connect(loc);
    return { store, tmpDir: tmpdir(), close: () => store.close() };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) throw new UsageError(`unsupported backup location "${location}": a directory or s3://bucket/prefix`);
  const dir = resolve(location);
  const tmpDir = join(dir, 'tmp');
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  return { store: new LocalObjectStore(dir), tmpDir, close: () => undefined };
}

export const describeRepository = (location: string, env: NodeJS.ProcessEnv): string => (location.startsWith('s3://') ? describeS3(parseS3Location(location, env)) : resolve(location));

/** Every backup with a manifest, oldest first (ids sort by time); `manifest` null where it is damaged. */
export async function listBackups(repo: Repository): Promise<{ id: string; manifest: BackupManifest | null; problem?: string }[]> {
  const ids: string[] = [];
  for await (const key of repo.store.list('backups/')) {
    const m = MANIFEST.exec(key);
    if (m) ids.push(m[1]!);
  }
  const out = [];
  for (const id of ids.sort()) {
    try {
      out.push({ id, manifest: await readManifest(repo, id) });
    } catch (err) {
      out.push({ id, manifest: null, problem: (err as Error).message });
    }
  }
  return out;
}

/** The manifest of backup `id`; a CliError when it has none (incomplete: interrupted) or it does not check out. */
export async function readManifest(repo: Repository, id: string): Promise<BackupManifest> {
  const bytes = await repo.store.get(manifestKey(id));
  if (!bytes) throw new CliError(`backup ${id} in ${repo.store.location} has no manifest: it is incomplete (interrupted) or does not exist`, 1, 'restore a complete one (docsearch restore --list)');
  return openManifest(bytes.toString('utf8'), `backup ${id}`);
}
