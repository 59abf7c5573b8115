import { type DatabaseHandle, type DatabaseOptions, sqlitePath } from './database.js';
import { openSqlite } from './sqlite.js';

/**
 * Opens the configured database (`--database`, else SQLite in the data directory) and runs pending migrations.
 * The PostgreSQL driver is loaded only when one is configured: the embedded default never pays for it.
 */
export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  const migrate = opts.migrate ?? true;
  if (!opts.url) return openSqlite(sqlitePath(opts.dataDir), { migrate });
  const { openPostgres } = await import('./postgres.js');
  return openPostgres(opts.url, opts.log, { migrate });
}
