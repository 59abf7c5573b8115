import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type DatabaseConnection, type Driver, Kysely, SqliteDialect, type SqliteDatabase, SqliteDriver } from 'kysely';
import { LRUCache } from 'lru-cache';
import { LocalEvents, LocalLocks } from '../coordination.js';
import type { DatabaseHandle } from './database.js';
import { migrate, refuseNewerSchema } from './migrations/index.js';
import type { Database } from './schema.js';

/**
 * SQLite rolls a transaction back by itself when a statement fails with SQLITE_FULL (or an I/O error); the
 * ROLLBACK Kysely then sends fails with "no transaction is active" and hides the real error (a full disk
 * must surface as one). Rolling back only what is still open keeps the original error.
 */
class KeepErrorSqliteDialect extends SqliteDialect {
  private readonly database: SqliteDatabase;

  constructor(private readonly raw: BetterSqlite3.Database) {
    const database = keptStatements(raw);
    super({ database });
    this.database = database;
  }

  override createDriver(): Driver {
    const raw = this.raw;
    return new (class extends SqliteDriver {
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (raw.inTransaction) await super.rollbackTransaction(connection);
      }
    })({ database: this.database });
  }
}

/** Prepared statements kept, least recently used dropped past this many. */
const KEPT_STATEMENTS = 256;

/**
 * Kysely prepares every query anew, and SQLite compiles it each time: a measurable part of a search's main thread
 * (its four statements; bench/results/search.md). The same SQL text gets the statement compiled before; SQLite itself recompiles a
 * kept statement when the schema has changed since. Kysely runs one query at a time on the connection (a stream
 * holds it to the end), so a kept statement is never asked for while it is still reading rows.
 */
function keptStatements(raw: BetterSqlite3.Database): SqliteDatabase {
  const kept = new LRUCache<string, BetterSqlite3.Statement>({ max: KEPT_STATEMENTS });
  return {
    prepare(sql: string) {
      let statement = kept.get(sql);
      if (!statement) kept.set(sql, (statement = raw.prepare(sql)));
      return statement;
    },
    close() {
      kept.clear();
      raw.close();
    },
  };
}

/**
 * Opens (creating if needed) the embedded metadata database in WAL mode and runs pending migrations.
 * WAL lets operator commands (`docsearch users add`) write while the daemon runs. One daemon uses a data
 * directory (data-dir-lock.ts), so its locks and events are in-process ones. `migrate: false` runs none, `upTo` only
 * as far as that one (a snapshot of an older library).
 */
export async function openSqlite(path: string, opts: { migrate?: boolean; upTo?: string } = {}): Promise<DatabaseHandle> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const raw = new BetterSqlite3(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // Checkpoints (every 1,000 pages by default) reuse the WAL from its start but never shrink it: a burst, or
  // a long read holding a checkpoint back, would leave a large WAL for good. Truncate it back to 16 MiB.
  raw.pragma('journal_size_limit = 16777216');
  // A search looks up its 400+ candidate documents at random: with SQLite's default 2 MiB page cache each lookup
  // read its pages from the OS again (more than twice the time of these settings: bench/results/search.md).
  // Reads through a memory map skip the read() call; the cache keeps what was read. Both fill only as pages are read.
  raw.pragma('cache_size = -65536');
  raw.pragma('mmap_size = 268435456');
  const db = new Kysely<Database>({ dialect: new KeepErrorSqliteDialect(raw) });
  try {
    await refuseNewerSchema(db);
    if (opts.migrate ?? true) await migrate(db, opts.upTo);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  let closed = false;
  return {
    db,
    engine: 'sqlite',
    location: path,
    shared: false,
    locks: new LocalLocks(),
    events: new LocalEvents(),
    probe: async () => {
      raw.prepare('SELECT 1').get();
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
