/**
 * Where `restore` brings a backup back: a new or empty data directory (embedded mode), or an empty PostgreSQL
 * database and S3 prefix (shared mode). Either kind takes a backup of either mode: the backup's database is a
 * SQLite file, put in place as it is, or its rows copied into PostgreSQL as `migrate` copies them. Nothing may use
 * the target meanwhile (the data-dir lock; the library lock, taken exclusively), and until the database is in
 * place no daemon serves what is there: the target's database carries a record of the copy under way that the
 * daemon refuses to serve (as during a migration) — in a data directory a placeholder database holding only that
 * record, replaced by the backup's last.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { nearestExisting } from '../../core/existing-folder.js';
import { scratchFolder } from '../../core/scratch-folder.js';
import { CliError } from '../../terminal/errors.js';
import { entriesOf, someOf } from './folder-entries.js';
import { lockDataDir } from '../../server/data-dir-lock.js';
import { readSecretsKey, SECRETS_KEY_FILE } from '../../server/secrets-key.js';
import type { Lease } from '../../store/coordination.js';
import { freeBytes } from '../../store/disk-space.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { LIBRARY_LOCK } from '../../store/library-lock.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, type S3Location } from '../../store/objects/location.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { type DatabaseHandle, sqlitePath } from '../../store/sql/database.js';
import { JobStore } from '../../store/sql/jobs.js';
import { openDatabase } from '../../store/sql/open-database.js';
import { redactDatabaseUrl } from '../../store/sql/database-url.js';
import { clearLeftovers, copyTable, hasLibrarySchema, LIBRARY_TABLES, libraryContents, MIGRATION_SETTING, readSetting, tableDigest, writeSetting } from '../../store/sql/library-copy.js';
import { migrate } from '../../store/sql/migrations/index.js';
import { openSqlite } from '../../store/sql/sqlite.js';
import { databaseUnreachable, storageUnreachable } from '../migrate/unreachable.js';

export interface RestoreTarget {
  label: string;
  /** Where the backup's `files/…` and `lancedb/…` go. */
  root: ObjectStore;
  /** A local folder for files on their way in. */
  tmpDir: string;
  /** The index as placed, to check it against the backup. */
  openVectors(): Promise<VectorStore>;
  /** Puts the database (the backup's SQLite file at `file`, verified) in place, last: from then on the library is there. */
  placeDatabase(file: string): Promise<void>;
  close(): Promise<void>;
}

const AGAIN = 'the target is left incomplete: empty it first';

/** What a backup puts in a target: every file and the database, to see that the target's disk can take them. */
export interface BackupContents {
  /** `backup <id> of <library>`: the restore record names it, so that only a run of the same backup goes on with a target. */
  label: string;
  files: { path: string; size: number }[];
  database: { size: number };
}

/** Room beyond the backup's own bytes: the placeholder database (about 0.5 MB) and the index check's reads. */
const MARGIN = 4 * 1024 * 1024;
const MB = (n: number): string => `${(n / (1024 * 1024)).toFixed(1)} MB`;

/**
 * A new or empty data directory, locked as a daemon would lock it, or one a restore of the same backup was
 * interrupted in (it goes on). From the start it holds a database that is only a record of the restore under way,
 * so that a daemon started on it before the restore has finished (after a kill -9, a full disk, a damaged file)
 * refuses to serve it rather than starting a new library over the half-restored one; the backup's database
 * replaces it last, in one rename.
 */
export async function embeddedTarget(dataDir: string, backup: BackupContents): Promise<RestoreTarget> {
  // A fresh mount point holds only `lost+found`: empty, as far as a restore is concerned.
  const held = entriesOf(dataDir);
  const resumed = held.length > 0;
  if (resumed) await refuseHeldDirectory(dataDir, held, backup.label);
  const placed = (path: string): number => {
    try {
      return statSync(join(dataDir, path)).size;
    } catch {
      return 0;
    }
  };
  // Checked before anything is made: a restore that would fill the disk fails midway, leaving it full.
  const need = backup.files.reduce((n, f) => n + (placed(f.path) === f.size ? 0 : f.size), backup.database.size) + MARGIN;
  // On the file system the folder is (or will be made) on; unknown, the restore goes on and says a full disk if it meets one.
  const free = await freeBytes(nearestExisting(dataDir)).catch(() => null);
  if (free !== null && free < need) {
    throw new CliError(
      `${dataDir} has ${MB(free)} free, and ${backup.label} needs ${MB(need)} there`,
      1,
      resumed ? 'free space there, then run the same restore again: it goes on where it stopped' : 'free space there, or restore into a directory on a larger disk; nothing was changed',
    );
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(dataDir);
  try {
    const tmpDir = join(dataDir, 'files', 'tmp');
    // What a run killed midway was copying: never placed, as a file is placed only once it checks out.
    await rm(tmpDir, { recursive: true, force: true });
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    if (!resumed) await placeRestoreRecord(dataDir, tmpDir, backup.label);
    return {
      label: dataDir,
      root: new LocalObjectStore(dataDir),
      tmpDir,
      openVectors: () => VectorStore.open(join(dataDir, 'lancedb')),
      async placeDatabase(file) {
        // Nothing has the placeholder open (the lock keeps daemons out): no journal of it may apply to the new file.
        for (const suffix of ['-wal', '-shm']) await rm(`${sqlitePath(dataDir)}${suffix}`, { force: true });
        await rename(file, sqlitePath(dataDir));
      },
      close: async () => release(),
    };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * A target that is not empty is refused, unless it holds what a restore of the same backup left (its placeholder
 * database with the record): then the restore goes on with it.
 */
async function refuseHeldDirectory(dataDir: string, held: string[], label: string): Promise<void> {
  const notEmpty = new CliError(`${dataDir} is not empty (it holds ${someOf(held)})`, 1, 'restore into a new or empty directory; nothing was changed');
  if (!existsSync(sqlitePath(dataDir))) throw notEmpty;
  let record: Partial<RestoreRecord> | null = null;
  const handle = await openSqlite(sqlitePath(dataDir), { migrate: false }).catch(() => null);
  if (!handle) throw notEmpty;
  try {
    const text = (await hasLibrarySchema(handle.db)) ? await readSetting(handle.db, MIGRATION_SETTING) : null;
    record = text ? (JSON.parse(text) as Partial<RestoreRecord>) : null;
  } catch {
    record = null;
  } finally {
    await handle.close();
  }
  if (!record || record.command !== 'restore') throw notEmpty;
  if (record.source?.library !== label) {
    throw new CliError(`${dataDir} holds an unfinished restore of ${String(record.source?.library)}`, 1, 'run that restore again to finish it, or restore into a new or empty directory');
  }
}

/** The placeholder database, made aside and renamed in: a daemon finds either no database or the record, never a half-made one. */
async function placeRestoreRecord(dataDir: string, tmpDir: string, label: string): Promise<void> {
  const file = join(tmpDir, 'database.placeholder.sqlite');
  const handle = await openSqlite(file);
  try {
    await writeSetting(handle.db, MIGRATION_SETTING, JSON.stringify({ command: 'restore', source: { library: label }, state: 'copying', startedAt: Date.now() } satisfies RestoreRecord));
  } finally {
    // Closing checkpoints the WAL into the file and removes it: the file alone holds the record.
    await handle.close();
  }
  await rename(file, sqlitePath(dataDir));
}

/** The record a restore under way keeps in the target database (the `migration` setting the daemon checks). */
interface RestoreRecord {
  command: 'restore';
  source: { library: string };
  state: 'copying';
  startedAt: number;
}

/**
 * An empty PostgreSQL database (its schema made here) and an empty S3 prefix, or ones a restore of this same
 * backup was interrupted in (it goes on: every step can run again). `backup` names the backup, for the record.
 */
export async function sharedTarget(database: string, loc: S3Location, backup: string, secretsKey: Buffer | null): Promise<RestoreTarget> {
  const label = `${redactDatabaseUrl(database)} + ${describeS3(loc)}`;
  // Not migrated yet: a target that is refused is left as it was, an empty database without a schema made in it.
  const handle = await openDatabase({ url: database, dataDir: '', migrate: false }).catch((err: unknown) => {
    throw databaseUnreachable('the database', redactDatabaseUrl(database), '--database (or DOCSEARCH_DATABASE_URL)', err);
  });
  const closers: (() => Promise<void> | void)[] = [() => handle.close()];
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) await fn();
  };
  try {
    const lease: Lease | null = await handle.locks.tryAcquire(LIBRARY_LOCK);
    if (!lease) throw new CliError(`docsearch replicas are running on ${handle.location}`, 1, 'nothing may use the target while a backup is restored into it: stop them');
    closers.push(() => lease.release());
    const { S3ObjectStore } = await import('../../store/objects/s3.js');
    const root = await S3ObjectStore.connect(loc);
    closers.push(() => root.close());

    const schema = await hasLibrarySchema(handle.db);
    const text = schema ? await readSetting(handle.db, MIGRATION_SETTING) : null;
    const record = text ? (JSON.parse(text) as Partial<RestoreRecord>) : null;
    if (record && !(record.command === 'restore' && record.source?.library === backup)) {
      throw new CliError(`${handle.location} holds ${record.command === 'restore' ? `an unfinished restore of ${record.source?.library}` : 'a library being migrated into it'}`, 1, 'restore into an empty database and storage');
    }
    if (!record) await refuseTakenTarget(handle, root, loc, secretsKey);
    await migrate(handle.db).catch((err: unknown) => {
      throw new CliError(`could not bring the database ${handle.location} to this version's schema: ${(err as Error).message}`);
    });
    if (!record) {
      await clearLeftovers(handle.db);
      await writeSetting(handle.db, MIGRATION_SETTING, JSON.stringify({ command: 'restore', source: { library: backup }, state: 'copying', startedAt: Date.now() } satisfies RestoreRecord));
    }
    const { path: tmpDir } = await scratchFolder('restore');
    closers.push(() => rm(tmpDir, { recursive: true, force: true }));
    return {
      label,
      root,
      tmpDir,
      openVectors: () => VectorStore.openS3Detached(loc, root.at('lancedb')),
      async placeDatabase(file) {
        // A snapshot of an earlier release is brought to this version's schema before its rows are read.
        const snapshot = await openSqlite(file);
        try {
          const cutoff = Date.now();
          for (const table of LIBRARY_TABLES) await copyTable(snapshot.db, handle.db, table, { cutoff, batchRows: 1000 });
          for (const table of LIBRARY_TABLES) {
            const [want, got] = await Promise.all([tableDigest(snapshot.db, table, 'source', cutoff), tableDigest(handle.db, table, 'target', cutoff)]);
            if (!want.equals(got)) throw new CliError(`the restored table ${table.name} does not match the backup's (${got.rows} rows against ${want.rows}, or their contents differ)`, 1, AGAIN);
          }
        } finally {
          await snapshot.close();
        }
        // The jobs running at the backup's moment are held under the source's leases, which nothing here renews: they
        // are pending again at once, where the restored replicas would wait those out (--job-lease: two minutes).
        await new JobStore(handle.db, systemClock).recoverForeignLeases('');
        await handle.db.deleteFrom('settings').where('key', '=', MIGRATION_SETTING).execute();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Refuses a shared-mode target that is not empty: a database holding a library, a prefix holding an index, originals
 * or another library's secrets key. Keys the store refuses are said as such (the S3 SDK's own text may be "UnknownError").
 */
async function refuseTakenTarget(handle: DatabaseHandle, root: ObjectStore, loc: S3Location, secretsKey: Buffer | null): Promise<void> {
  const schema = await hasLibrarySchema(handle.db);
  const held = schema ? await libraryContents(handle.db) : { users: 0, documents: 0, clients: 0 };
  if (held.users + held.documents + held.clients > 0) {
    throw new CliError(`${handle.location} already holds a library (${held.users} account(s), ${held.documents} document(s), ${held.clients} application(s))`, 1, 'restore into an empty database; nothing was changed');
  }
  const taken = await (async () => {
    for (const prefix of ['lancedb/', 'files/']) {
      for await (const key of root.list(prefix)) if (!key.startsWith('files/tmp/')) return key;
    }
    return null;
  })().catch((err: unknown) => {
    throw storageUnreachable('the storage', describeS3(loc), err);
  });
  if (taken) throw new CliError(`${describeS3(loc)} already holds an index or originals (${taken})`, 1, 'restore into an empty prefix; nothing was changed');
  // Another library's key: found only at the end (the backup's would not be placed), with everything copied.
  const keyThere = await readSecretsKey({ secretsKey: undefined, secretsKeyFile: undefined }, root);
  if (keyThere && !(secretsKey && keyThere.key.equals(secretsKey))) {
    throw new CliError(`${describeS3(loc)} already holds another secrets key (${SECRETS_KEY_FILE})`, 1, 'restore into an empty prefix; nothing was changed');
  }
}
