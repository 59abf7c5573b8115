/**
 * The library a backup copies, opened beside the daemons that serve it, without stopping them: its database (read
 * as one snapshot), its index (read, and versions tagged), and its originals and index files as an object store
 * (`files/…`, `lancedb/…`): a data directory (embedded mode), or a PostgreSQL database and an S3 prefix (shared
 * mode). Only one backup of a library runs at a time: the version tags of one that was killed are then known to
 * be stale (version-pins.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../../terminal/errors.js';
import { lockFile } from '../../server/data-dir-lock.js';
import { readIndexInfo } from '../../store/lancedb/chunk-index-info.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, parseS3Location } from '../../store/objects/location.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { sqlitePath } from '../../store/sql/database.js';
import { openDatabase } from '../../store/sql/open-database.js';
import { redactDatabaseUrl } from '../../store/sql/database-url.js';
import { hasLibrarySchema } from '../../store/sql/library-copy.js';
import { snapshotPostgres, snapshotSqlite } from '../../store/sql/snapshot.js';
import { databaseUnreachable } from '../migrate/unreachable.js';

export interface RunningLibrary {
  label: string;
  mode: 'embedded' | 'shared';
  /** `files/<ab>/<sha256>` and `lancedb/…`. */
  root: ObjectStore;
  vectors: VectorStore;
  /** Writes the database as of now into a new SQLite file; returns the moment it shows. */
  snapshotDatabase(to: string): Promise<number>;
  /** Holds the library's backup lock; refuses while another backup of it runs. */
  lockBackups(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Embedded mode: the data directory a daemon runs on (or none does). */
export async function openEmbeddedLibrary(dataDir: string): Promise<RunningLibrary> {
  if (!existsSync(sqlitePath(dataDir))) throw new CliError(`${dataDir} holds no docsearch library (there is no docsearch.db in it)`, 1, 'pass the --data-dir the daemon runs with');
  // A library a newer docsearch wrote is refused (docs/operations.md, Upgrading) before the backup key, the backup
  // lock or a version tag is made: opening the database refuses a newer schema, reading the index info a newer format.
  await (await openDatabase({ dataDir, migrate: false })).close();
  const vectors = await VectorStore.open(join(dataDir, 'lancedb'));
  await readIndexInfo(vectors).catch(async (err: unknown) => {
    await vectors.close();
    throw err;
  });
  return {
    label: dataDir,
    mode: 'embedded',
    root: new LocalObjectStore(dataDir),
    vectors,
    snapshotDatabase: async (to) => snapshotSqlite(sqlitePath(dataDir), to),
    async lockBackups() {
      const release = lockFile(join(dataDir, 'backup.lock'));
      if (!release) throw new CliError(`another backup of ${dataDir} is running`, 1, 'wait for it to finish');
      return async () => release();
    },
    close: () => vectors.close(),
  };
}

/** The advisory lock a shared-mode backup holds on the library's database (it goes with the connection). */
const BACKUP_LOCK = 'backup';

/**
 * Shared mode: the database and storage the replicas run on (`--database`, `--storage`, as `serve` takes them). The
 * index is opened detached: a backup neither optimizes nor prunes, and takes no part in the replicas' commits.
 */
export async function openSharedLibrary(database: string, storage: string, env: NodeJS.ProcessEnv): Promise<RunningLibrary> {
  const loc = parseS3Location(storage, env);
  const label = `${redactDatabaseUrl(database)} + ${describeS3(loc)}`;
  const handle = await openDatabase({ url: database, dataDir: '', migrate: false }).catch((err: unknown) => {
    throw databaseUnreachable('the database', redactDatabaseUrl(database), '--database (or DOCSEARCH_DATABASE_URL)', err);
  });
  const closers: (() => Promise<void> | void)[] = [() => handle.close()];
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) await fn();
  };
  try {
    if (!(await hasLibrarySchema(handle.db))) throw new CliError(`${handle.location} holds no docsearch library (it has none of its tables)`, 1, 'pass the --database the replicas run with');
    const { S3ObjectStore } = await import('../../store/objects/s3.js');
    const root = await S3ObjectStore.connect(loc);
    closers.push(() => root.close());
    const vectors = await VectorStore.openS3Detached(loc, root.at('lancedb'));
    closers.push(() => vectors.close());
    await readIndexInfo(vectors); // a newer chunk index format is refused, as in embedded mode
    return {
      label,
      mode: 'shared',
      root,
      vectors,
      snapshotDatabase: (to) => snapshotPostgres(handle.db, to),
      async lockBackups() {
        const lease = await handle.locks.tryAcquire(BACKUP_LOCK);
        if (!lease) throw new CliError(`another backup of ${label} is running`, 1, 'wait for it to finish');
        return () => lease.release();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
