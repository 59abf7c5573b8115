/**
 * What the operator commands (`users add`, `clients add`, `reindex`) share with `serve`: the same flags
 * (library-options.ts), environment variables and config file, so that they reach the library the daemon serves,
 * embedded (a data directory) or shared (a PostgreSQL database). Loaded only when a command runs.
 */
import { existsSync } from 'node:fs';
import { CliError } from '../terminal/errors.js';
import type { IO } from '../terminal/io.js';
import { NewerLibraryError } from '../core/newer-library.js';
import type { DatabaseHandle } from '../store/sql/database.js';
import { openDatabase } from '../store/sql/open-database.js';
import { sqlitePath } from '../store/sql/database.js';
import { lastApplied } from '../store/sql/migrations/index.js';
import { redactDatabaseUrl } from '../store/sql/database-url.js';
import { ConfigError, resolveConfig, type ServeConfig } from '../server/config.js';

/** The configuration as `serve` resolves it; a bad value is a usage error naming the option. */
export function operatorConfig(io: IO, command: string, flags: Record<string, unknown>, configFile?: string): ServeConfig {
  try {
    return resolveConfig(flags, io.env, configFile);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, 2, `see \`docsearch ${command} --help\``);
    throw err;
  }
}

/**
 * Opens (and migrates) the configured database; a failure names it, its password masked. A data directory (or a
 * PostgreSQL database) that holds no library is refused, and nothing is made in it, unless `init`: a mistyped or
 * forgotten --data-dir must not quietly start a second, empty library that the running daemon never sees.
 */
export async function openOperatorDatabase(config: ServeConfig, opts: { init?: boolean | undefined } = {}): Promise<DatabaseHandle> {
  if (!opts.init && !(await holdsLibrary(config))) {
    const where = config.database ? redactDatabaseUrl(config.database) : config.dataDir;
    throw new CliError(`no library at ${where}; pass --data-dir${config.database ? ' (or --database)' : ''}, or --init to make one`, 1, "the daemon's --data-dir is where it keeps docsearch.db (see `docsearch serve --help`)");
  }
  try {
    return await openDatabase({ url: config.database, dataDir: config.dataDir });
  } catch (err) {
    if (err instanceof NewerLibraryError) throw err; // its own exit code (main.ts)
    throw new CliError((err as Error).message);
  }
}

/** Whether the configured place holds a library: the data directory's database file, or a migrated PostgreSQL database. */
async function holdsLibrary(config: ServeConfig): Promise<boolean> {
  if (!config.database) return existsSync(sqlitePath(config.dataDir));
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ url: config.database, dataDir: config.dataDir, migrate: false });
  } catch (err) {
    if (err instanceof NewerLibraryError) throw err; // its own exit code (main.ts)
    throw new CliError((err as Error).message);
  }
  try {
    return (await lastApplied(handle.db)) !== null;
  } finally {
    await handle.close();
  }
}
