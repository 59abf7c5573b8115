/**
 * Where `restore` brings a backup back: a new or empty data directory (embedded mode), or an empty PostgreSQL
 * database and S3 prefix (shared mode). Either kind takes a backup of either mode: the backup's database is a
 * SQLite file, put in place as it is, or its rows copied into PostgreSQL as `migrate` copies them. Nothing may use
 * the target meanwhile (the data-dir lock; the library lock, taken exclusively), and until the database is in
 * place no daemon serves what is there: a data directory has no database yet, and a PostgreSQL database carries a
 * record of the copy under way that the daemon refuses to serve (as during a migration).
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { scratchFolder } from '../../core/scratch-folder.js';
import { CliError } from '../../terminal/errors.js';
import { lockDataDir } from '../../server/data-dir-lock.js';
import type { Lease } from '../../store/coordination.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { LIBRARY_LOCK } from '../../store/library-lock.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, type S3Location } from '../../store/objects/location.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { sqlitePath } from '../../store/sql/database.js';
import { JobStore } from '../../store/sql/jobs.js';
import { openDatabase } from '../../store/sql/open-database.js';
import { redactDatabaseUrl } from '../../store/sql/database-url.js';
import { clearLeftovers, copyTable, hasLibrarySchema, LIBRARY_TABLES, libraryContents, MIGRATION_SETTING, readSetting, tableDigest, writeSetting } from '../../store/sql/library-copy.js';
import { migrate } from '../../store/sql/migrations/index.js';
import { openSqlite } from '../../store/sql/sqlite.js';

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

/** A new or empty data directory, locked as a daemon would lock it. */
export async function embeddedTarget(dataDir: string): Promise<RestoreTarget> {
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new CliError(`${dataDir} is not empty`, 1, 'restore into a new or empty directory; nothing was changed');
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(dataDir);
  const tmpDir = join(dataDir, 'files', 'tmp');
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  return {
    label: dataDir,
    root: new LocalObjectStore(dataDir),
    tmpDir,
    openVectors: () => VectorStore.open(join(dataDir, 'lancedb')),
    placeDatabase: (file) => rename(file, sqlitePath(dataDir)),
    close: async () => release(),
  };
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
export async function sharedTarget(database: string, loc: S3Location, backup: string): Promise<RestoreTarget> {
  const label = `${redactDatabaseUrl(database)} + ${describeS3(loc)}`;
  // Not migrated yet: a target that is refused is left as it was, an empty database without a schema made in it.
  const handle = await openDatabase({ url: database, dataDir: '', migrate: false }).catch((err: unknown) => {
    throw new CliError(`could not open the database ${redactDatabaseUrl(database)}: ${(err as Error).message}`);
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
    if (!record) {
      const held = schema ? await libraryContents(handle.db) : { users: 0, documents: 0, clients: 0 };
      if (held.users + held.documents + held.clients > 0) {
        throw new CliError(`${handle.location} already holds a library (${held.users} account(s), ${held.documents} document(s), ${held.clients} application(s))`, 1, 'restore into an empty database; nothing was changed');
      }
      for (const prefix of ['lancedb/', 'files/']) {
        for await (const key of root.list(prefix)) {
          if (key.startsWith('files/tmp/')) continue;
          throw new CliError(`${describeS3(loc)} already holds an index or originals (${key})`, 1, 'restore into an empty prefix; nothing was changed');
        }
      }
    }
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
