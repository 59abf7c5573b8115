import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Events, Locks } from '../coordination.js';
import type { Engine } from './dialect.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** Where the database's own troubles are reported (pino's logger fits). */
export interface DatabaseLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** An open metadata database, migrated to the latest schema, with what processes sharing it coordinate through. */
export interface DatabaseHandle {
  db: Db;
  engine: Engine;
  /** For messages: the SQLite file, or the PostgreSQL URL with its password redacted. */
  location: string;
  /**
   * True when other processes may run on the same database (PostgreSQL: replicas). Then no process may take
   * another's work for dead because it is not its own (see IngestWorker's start-up recovery).
   */
  shared: boolean;
  /** Locks across every process of the library: in-process on SQLite (one daemon per data dir), advisory locks on PostgreSQL. */
  locks: Locks;
  /** Events across every process of the library: function calls on SQLite, LISTEN/NOTIFY on PostgreSQL. */
  events: Events;
  /** Resolves when the database answers a trivial query now; rejects otherwise (health). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A postgres:// or postgresql:// URL (shared mode); unset: the embedded SQLite file under `dataDir`. */
  url?: string | undefined;
  dataDir: string;
  log?: DatabaseLog;
  /** Run pending migrations (default true). False only to look at a database without writing to it (`migrate --dry-run`). */
  migrate?: boolean;
}

export const sqlitePath = (dataDir: string): string => join(dataDir, 'docsearch.db');
