/**
 * The library a backup copies, opened beside the daemon that serves it, without stopping it: its database (read
 * as one snapshot), its index (read, and versions tagged), and its originals and index files as an object store
 * (`files/…`, `lancedb/…`). Only one backup of a library runs at a time: the version tags of one that was killed
 * are then known to be stale (version-pins.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../../terminal/errors.js';
import { lockFile } from '../../server/data-dir-lock.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { sqlitePath } from '../../store/sql/database.js';
import { snapshotSqlite } from '../../store/sql/snapshot.js';

export interface RunningLibrary {
  label: string;
  mode: 'embedded' | 'shared';
  /** `files/<ab>/<sha256>` and `lancedb/…`. */
  root: ObjectStore;
  vectors: VectorStore;
  /** Writes the database as of now into a new SQLite file; returns the moment it shows. */
  snapshotDatabase(to: string): Promise<number>;
  /** Holds the library's backup lock; refuses while another backup of it runs. */
  lockBackups(): Promise<() => void>;
  close(): Promise<void>;
}

/** Embedded mode: the data directory a daemon runs on (or none does). */
export async function openEmbeddedLibrary(dataDir: string): Promise<RunningLibrary> {
  if (!existsSync(sqlitePath(dataDir))) throw new CliError(`${dataDir} holds no docsearch library (there is no docsearch.db in it)`, 1, 'pass the --data-dir the daemon runs with');
  const vectors = await VectorStore.open(join(dataDir, 'lancedb'));
  return {
    label: dataDir,
    mode: 'embedded',
    root: new LocalObjectStore(dataDir),
    vectors,
    snapshotDatabase: async (to) => snapshotSqlite(sqlitePath(dataDir), to),
    async lockBackups() {
      const release = lockFile(join(dataDir, 'backup.lock'));
      if (!release) throw new CliError(`another backup of ${dataDir} is running`, 1, 'wait for it to finish');
      return release;
    },
    close: () => vectors.close(),
  };
}
