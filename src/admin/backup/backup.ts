/**
 * One backup of a running library into a repository (repository.ts), while daemons go on serving it:
 *
 * 1. the database, as of one moment (store/sql/snapshot.ts);
 * 2. then each index table's latest version, tagged so that the daemon's pruning leaves its files until they are
 *    copied (version-pins.ts). Taken after the database, the version holds every chunk of every document the
 *    snapshot has as ready (chunks are written before a document is marked ready), but for those deleted in
 *    between (chunks are removed before the row is): the snapshot's copy leaves them out, and takes the project
 *    of those moved in between from their rows (index-window.ts). The backup is the library as if those changes
 *    came before its moment; the summary names them (`deleted_while_taken`, `moved_while_taken`). Rows of
 *    documents the snapshot does not have are swept by the restored daemon at its start. A re-index that
 *    switches to a new table while the backup runs fails it (run it again): the pinned table would be dropped;
 * 3. the originals the snapshot's documents use, and the files of those table versions, each hashed as read:
 *    those the last complete backup sealed with the same key has already (same place, same size: they are
 *    immutable) are not copied again; a manifest that key did not seal is not trusted for their hashes;
 * 4. the manifest, sealed with the backup key (manifest.ts), last: until it is written, the backup does not exist
 *    for `restore`, which lists it as incomplete (the run writes `started.json` first).
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, InterruptedError } from '../../terminal/errors.js';
import { isDiskFull } from '../../core/disk-full.js';
import { scratchFolder } from '../../core/scratch-folder.js';
import { VERSION } from '../../core/version.js';
import type { Progress } from '../migrate/progress.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { referencedOriginals } from '../../store/sql/library-copy.js';
import { fileOfVersion, pinLatest, removeBackupTags, unpin } from '../../store/lancedb/version-pins.js';
import { openSqlite } from '../../store/sql/sqlite.js';
import { readIndexInfo } from '../../store/lancedb/chunk-index-info.js';
import { applyWindowChanges } from './index-window.js';
import { eachLimited } from '../each-limited.js';
import { copyObject } from './copy-object.js';
import { type BackupKey, wrapSecretsKey } from './backup-key.js';
import { type BackedUpFile, BACKUP_FORMAT, type BackupManifest, databaseKey, isLibraryPath, manifestKey, objectKey, ownKey, sealManifest, startedKey } from './manifest.js';
import type { RateLimit } from './rate-limit.js';
import { listBackups, type Repository } from './repository.js';
import type { RunningLibrary } from './running-library.js';

/** Files copied at once (object stores answer each request in tens of milliseconds: keep several in flight). */
const FILES_AT_ONCE = 4;

export interface BackupSummary {
  id: string;
  library: string;
  repository: string;
  /** The backup key that sealed it. */
  key_id: string;
  /** The id of the library's secrets key it carries (wrapped under the backup key), or null: the library had none. */
  secrets_key_id: string | null;
  taken_at: string;
  /** The backup this one took unchanged files from, or null (the first). */
  based_on: string | null;
  tables: { name: string; version: number; rows: number }[];
  files: { total: number; bytes: number; copied: number; copied_bytes: number; reused: number; reused_bytes: number };
  originals: { total: number; copied: number; missing: string[] };
  database_bytes: number;
  removed_backups: string[];
  /** Documents deleted between the database snapshot and the index pin: left out. */
  deleted_while_taken: string[];
  /** Documents moved to another project between the two: in the backup under that project. */
  moved_while_taken: string[];
  seconds: number;
}

export interface BackupOptions {
  library: RunningLibrary;
  repo: Repository;
  repository: string;
  /** Seals the manifest. */
  key: BackupKey;
  /** The library's secrets key (server/secrets-key.ts), carried wrapped under `key`; null: it has none yet. */
  secretsKey?: Buffer | null;
  progress: Progress;
  rate?: RateLimit;
  /** Keep only this many newest backups (this one included); absent: keep all. */
  keep?: number;
  now?: () => number;
  /** Ctrl-C: the run stops between files (or midway through one), and removes its tag and work folder as it goes. */
  signal?: AbortSignal;
  /** Test seam: runs between the database snapshot and the index pin. */
  afterSnapshot?: () => Promise<void>;
}

/**
 * A sortable id: the second, then its milliseconds (3 hex digits) and 3 random ones. The ids sort as the backups were
 * taken, which is how restore finds the newest; with 6 random characters two backups in one second sorted by chance.
 */
export function newBackupId(now: number): string {
  const ms = (now % 1000).toString(16).padStart(3, '0');
  return `${new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${ms}${randomBytes(2).toString('hex').slice(0, 3)}`;
}

/** Every key under `prefix` (for a table: its files, as paths relative to `lancedb/`). */
async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const key of store.list(prefix)) out.push(key);
  return out.sort();
}

export async function runBackup(opts: BackupOptions): Promise<BackupSummary> {
  const now = opts.now ?? Date.now;
  const started = now();
  const { library, repo, progress } = opts;
  const id = newBackupId(started);
  // Its database snapshot: a backup killed midway leaves it, and the next one removes it (core/scratch-folder.ts).
  const { path: work, abandoned } = await scratchFolder('backup');
  const release = await library.lockBackups();
  try {
    progress.line(`backup ${id} of ${library.label} into ${opts.repository}, sealed with backup key ${opts.key.id}`);
    await repo.store.put(startedKey(id), `${JSON.stringify({ id, docsearch: VERSION, library: library.label, started_at: new Date(started).toISOString() })}\n`);
    if (abandoned > 0) progress.line(`removed the work folder of a backup that did not finish (${abandoned})`);
    const previous = await basis(repo, opts.key, progress);
    const stale = await removeBackupTags(library.vectors);
    if (stale > 0) progress.line(`removed the version tags a backup that did not finish left (${stale})`);

    const snapshot = join(work, 'docsearch.db');
    const indexBefore = await readIndexInfo(library.vectors);
    const takenAt = await library.snapshotDatabase(snapshot);
    progress.line(`database: snapshot taken at ${new Date(takenAt).toISOString()}`);
    await opts.afterSnapshot?.();
    const tables = await pinLatest(library.vectors, id);
    try {
      progress.line(`index: ${tables.length ? tables.map((t) => `${t.name} at version ${t.version} (${t.rows.toLocaleString('en-US')} rows)`).join(', ') : 'no tables yet'}`);
      const index = await readIndexInfo(library.vectors);
      if (indexBefore && index?.table !== indexBefore.table) throw reindexed();
      const changes = await applyWindowChanges(snapshot, library.vectors, tables.find((t) => t.name === index?.table));
      if (changes.deleted.length) progress.line(`left out, deleted after the database snapshot and before the index pin: ${changes.deleted.join(', ')}`);
      if (changes.moved.length) progress.line(`moved after the database snapshot and before the index pin, backed up in their new project: ${changes.moved.join(', ')}`);
      const db = await openSqlite(snapshot, { migrate: false });
      const originals = await referencedOriginals(db.db).finally(() => db.close());

      // What to copy: the originals, each pinned version's files, and the small files beside the tables.
      const wanted: { path: string; key: string; immutable: boolean; original: boolean }[] = [];
      for (const { sha256 } of originals) {
        const path = `files/${sha256.slice(0, 2)}/${sha256}`;
        wanted.push({ path, key: objectKey(path), immutable: true, original: true });
      }
      const pinned = new Map(tables.map((t) => [`${t.name}.lance`, t.version]));
      for (const key of await keysUnder(library.root, 'lancedb/')) {
        const rest = key.slice('lancedb/'.length);
        const slash = rest.indexOf('/');
        if (slash < 0) {
          // Files beside the tables that are no part of the index (a temp file, an editor's) stay behind.
          if (!rest.endsWith('.tmp') && isLibraryPath(key)) wanted.push({ path: key, key: ownKey(id, key), immutable: false, original: false });
          continue;
        }
        const version = pinned.get(rest.slice(0, slash));
        if (version !== undefined && fileOfVersion(rest.slice(slash + 1), version)) wanted.push({ path: key, key: objectKey(key), immutable: true, original: false });
      }

      const before = new Map((previous?.files ?? []).map((f) => [f.path, f]));
      const files: BackedUpFile[] = [];
      const missing: string[] = [];
      const counts = { copied: 0, copiedBytes: 0, reused: 0, reusedBytes: 0 };
      const step = progress.step('files', wanted.length, 'files');
      await eachLimited(wanted, FILES_AT_ONCE, async (w) => {
        opts.signal?.throwIfAborted();
        const had = w.immutable ? before.get(w.path) : undefined;
        if (had && had.key === w.key) {
          const [src, dst] = await Promise.all([library.root.head(w.path), repo.store.head(w.key)]);
          if (src && dst && src.size === had.size && dst.size === had.size) {
            files.push(had);
            counts.reused++;
            counts.reusedBytes += had.size;
            return step.add(1);
          }
        }
        const got = await copyObject(library.root, w.path, repo.store, w.key, { tmpDir: repo.tmpDir, ...(opts.rate ? { rate: opts.rate } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
        if (!got) {
          // An original whose documents were deleted while this ran; a file of another version pruned meanwhile.
          if (w.original) missing.push(w.path.slice(w.path.lastIndexOf('/') + 1));
          return step.add(1);
        }
        files.push({ path: w.path, key: w.key, ...got });
        counts.copied++;
        counts.copiedBytes += got.size;
        step.add(1, got.size);
      });
      step.end();
      // Said, not only recorded: a backup run from cron without --json would otherwise lack them unnoticed.
      for (const sha of missing.sort()) progress.line(`warning: original ${sha} is missing in the library (its documents deleted while the backup ran, or the file lost): the backup holds its documents without it`);
      // The index info copied names the pinned table only if no re-index switched meanwhile (and dropped it).
      if ((await readIndexInfo(library.vectors))?.table !== index?.table) throw reindexed();

      const local = new (await import('../../store/objects/local.js')).LocalObjectStore(work);
      const database = await copyObject(local, 'docsearch.db', repo.store, databaseKey(id), { tmpDir: repo.tmpDir });
      if (!database) throw new CliError('the database snapshot vanished before it was stored');
      opts.signal?.throwIfAborted(); // stopped before the manifest: the backup does not exist
      files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)); // by code unit: the manifest reads the same from any host
      const manifest: Omit<BackupManifest, 'key_id'> = {
        format: BACKUP_FORMAT,
        id,
        docsearch: VERSION,
        library: library.label,
        mode: library.mode,
        taken_at: new Date(takenAt).toISOString(),
        completed_at: new Date(now()).toISOString(),
        database: { path: 'docsearch.db', key: databaseKey(id), ...database },
        tables,
        files,
        missing_originals: missing.sort(),
        ...(opts.secretsKey ? { secrets_key: wrapSecretsKey(opts.secretsKey, opts.key, id) } : {}),
      };
      await repo.store.put(manifestKey(id), sealManifest(manifest, opts.key));
      // A first backup has nothing to be unchanged since.
      const reused = previous ? `, ${counts.reused} unchanged since ${previous.id} (${mb(counts.reusedBytes)})` : '';
      progress.line(`backup ${id} complete: ${counts.copied} file(s) copied (${mb(counts.copiedBytes)})${reused}`);
      const removed = opts.keep ? await applyRetention(repo, opts.key, opts.keep, progress) : [];
      return {
        id,
        library: library.label,
        repository: opts.repository,
        key_id: opts.key.id,
        secrets_key_id: manifest.secrets_key?.id ?? null,
        taken_at: manifest.taken_at,
        based_on: previous?.id ?? null,
        tables,
        files: { total: files.length, bytes: files.reduce((n, f) => n + f.size, 0), copied: counts.copied, copied_bytes: counts.copiedBytes, reused: counts.reused, reused_bytes: counts.reusedBytes },
        originals: { total: originals.length, copied: files.filter((f) => f.path.startsWith('files/') && !before.has(f.path)).length, missing },
        database_bytes: database.size,
        removed_backups: removed,
        deleted_while_taken: changes.deleted,
        moved_while_taken: changes.moved,
        seconds: Math.round((now() - started) / 100) / 10,
      };
    } finally {
      await unpin(library.vectors, id);
    }
  } catch (err) {
    if (opts.signal?.aborted) {
      throw new InterruptedError(
        `backup ${id} was interrupted: it is left incomplete (no manifest), and restore never takes it`,
        'run backup again: the files this one stored are kept, and not stored twice',
      );
    }
    if (!isDiskFull(err)) throw err;
    throw new CliError(
      `out of disk space while taking backup ${id}: ${(err as Error).message}`,
      1,
      `the backup is left incomplete, and restore never takes it: free space in ${opts.repository} (or in the system's temp folder, TMPDIR, which holds the database snapshot) and run backup again`,
    );
  } finally {
    await release();
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The backup this one takes unchanged files from: the newest sealed with `key`. A newer one that is not (damaged,
 * sealed with another key, unsealed) is said, and not trusted for the files' hashes.
 */
async function basis(repo: Repository, key: BackupKey, progress: Progress): Promise<BackupManifest | null> {
  const all = (await listBackups(repo, key)).filter((b) => b.status !== 'incomplete');
  const previous = all.filter((b) => b.status === 'complete').at(-1);
  const newest = all.at(-1);
  if (newest && newest !== previous) progress.line(`note: backup ${newest.id} is ${newest.status}: ${newest.problem}; this one copies every file ${previous ? `${previous.id} does not have` : 'again (the repository keeps what it has)'}`);
  return previous?.manifest ?? null;
}

const reindexed = () => new CliError('a re-index switched the chunk index to a new table while the backup ran', 1, 'run the backup again once the re-index is finished');

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

/**
 * Keeps the `keep` newest complete backups (sealed with `key`, or unsealed ones of an earlier release): older ones
 * lose their manifest first (from then on they are not backups), then their own files, then the shared objects no
 * kept backup lists. Left-overs of interrupted runs older than the oldest kept backup go too. Nothing goes while a
 * manifest does not check out with the key: which files it needs is not known.
 */
async function applyRetention(repo: Repository, key: BackupKey, keep: number, progress: Progress): Promise<string[]> {
  const all = (await listBackups(repo, key)).filter((b) => b.status !== 'incomplete');
  const odd = all.find((b) => b.status !== 'complete' && b.status !== 'unsealed');
  if (odd) {
    progress.line(`retention skipped: backup ${odd.id} is ${odd.status} (${odd.problem}); see docsearch restore --list`);
    return [];
  }
  const kept = all.slice(-keep);
  const dropped = all.slice(0, Math.max(0, all.length - keep)).map((b) => b.id);
  for (const id of dropped) await repo.store.delete(manifestKey(id));
  const oldest = kept[0]!.id;
  const used = new Set(kept.flatMap((b) => [b.manifest!.database.key, ...b.manifest!.files.map((f) => f.key)]));
  let removed = 0;
  for await (const k of repo.store.list('backups/')) {
    const id = k.split('/')[1]!;
    if (id < oldest && !k.endsWith('/manifest.json')) {
      await repo.store.delete(k);
      removed++;
    }
  }
  for await (const k of repo.store.list('objects/')) {
    if (used.has(k)) continue;
    await repo.store.delete(k);
    removed++;
  }
  if (dropped.length) progress.line(`retention: removed backup(s) ${dropped.join(', ')} (${removed} file(s) no kept backup uses)`);
  return dropped;
}
