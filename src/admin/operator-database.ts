import { Option } from 'commander';
import { CliError } from '../terminal/errors.js';
import type { IO } from '../terminal/io.js';
import { NewerLibraryError } from '../core/newer-library.js';
import type { DatabaseHandle } from '../store/sql/database.js';
import { openDatabase } from '../store/sql/open-database.js';
import { ConfigError, resolveConfig, type ServeConfig } from '../server/config.js';

/**
 * What the operator commands (`users add`, `clients add`, `reindex`) share with `serve`: the same flags,
 * environment variables and config file, so that they reach the library the daemon serves, embedded (a data
 * directory) or shared (a PostgreSQL database).
 */
export const databaseOption = (): Option =>
  new Option('--database <url>', 'PostgreSQL database of a shared-mode library (env DOCSEARCH_DATABASE_URL, which keeps the password out of the process list)');

/** The configuration as `serve` resolves it; a bad value is a usage error naming the option. */
export function operatorConfig(io: IO, command: string, flags: Record<string, unknown>, configFile?: string): ServeConfig {
  try {
    return resolveConfig(flags, io.env, configFile);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, 2, `see \`docsearch ${command} --help\``);
    throw err;
  }
}

/** Opens (and migrates) the configured database; a failure names it, its password masked. */
export async function openOperatorDatabase(config: ServeConfig): Promise<DatabaseHandle> {
  try {
    return await openDatabase({ url: config.database, dataDir: config.dataDir });
  } catch (err) {
    if (err instanceof NewerLibraryError) throw err; // its own exit code (main.ts)
    throw new CliError((err as Error).message);
  }
}
