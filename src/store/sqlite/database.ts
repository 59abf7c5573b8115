import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type DatabaseConnection, type Driver, Kysely, Migrator, SqliteDialect, SqliteDriver } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface SqliteHandle {
  db: Db;
  /** The raw driver, for the health probe. */
  raw: BetterSqlite3.Database;
  close(): Promise<void>;
}

/**
 * SQLite rolls a transaction back by itself when a statement fails with SQLITE_FULL (or an I/O error); the
 * ROLLBACK Kysely then sends fails with "no transaction is active" and hides the real error (a full disk
 * must surface as one). Rolling back only what is still open keeps the original error.
 */
class KeepErrorSqliteDialect extends SqliteDialect {
  constructor(private readonly raw: BetterSqlite3.Database) {
    super({ database: raw });
  }

  override createDriver(): Driver {
    const raw = this.raw;
    return new (class extends SqliteDriver {
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (raw.inTransaction) await super.rollbackTransaction(connection);
      }
    })({ database: raw });
  }
}

/**
 * Opens (creating if needed) the metadata database in WAL mode and runs pending migrations.
 * WAL lets operator commands (`docsearch users add`) write while the daemon runs.
 */
export async function openSqlite(path: string): Promise<SqliteHandle> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // Checkpoints (every 1,000 pages by default) reuse the WAL from its start but never shrink it: a burst, or
  // a long read holding a checkpoint back, would leave a large WAL for good. Truncate it back to 16 MiB.
  raw.pragma('journal_size_limit = 16777216');
  const db = new Kysely<Database>({ dialect: new KeepErrorSqliteDialect(raw) });
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
  let closed = false;
  return {
    db,
    raw,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
