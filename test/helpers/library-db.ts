/**
 * The data directory's SQLite database opened beside the daemon, for what a test reads or changes underneath it (a
 * row's age, an expiry): waits for the daemon's write lock rather than failing on it, and always closes.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

export function withLibraryDb<T>(dataDir: string, f: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'docsearch.db'));
  try {
    db.pragma('busy_timeout = 5000');
    return f(db);
  } finally {
    db.close();
  }
}
