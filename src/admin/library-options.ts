/**
 * The flags that name the library an operator command works on, as `serve` takes them. Declared apart from what
 * opens it (operator-database.ts), so that a command's --help and its refusals of bad arguments load no database.
 */
import { Command, Option } from 'commander';

/** The flags that name the library, as `serve` takes them: a data directory, or a shared-mode database. */
export interface LibraryFlags {
  dataDir?: string;
  database?: string;
  /** Make the library when there is none (otherwise the command refuses). */
  init?: boolean;
}

export const databaseOption = (): Option =>
  new Option('--database <url>', 'PostgreSQL database of a shared-mode library (env DOCSEARCH_DATABASE_URL, which keeps the password out of the process list)');

/** `--init`: let an operator command make the library it names when there is none yet. */
export const initOption = (): Option => new Option('--init', 'make a new, empty library there if it holds none (otherwise such a command refuses, and makes nothing)');

/** Adds --data-dir and --database to an operator command. */
export function libraryOptions(cmd: Command): Command {
  return cmd.option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)').addOption(databaseOption()).addOption(initOption());
}

