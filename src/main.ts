import type { ServerVariable } from './cli/environment.js';
import { keepNewFilesPrivate } from './core/private-files.js';
import { type IO, processIO } from './terminal/io.js';
import { OPERATOR_SUMMARIES, type OperatorName } from './cli/operator-commands.js';
import { type OperatorCommand, runProgram } from './cli/program.js';

/**
 * The server's variables for `docsearch help environment` and docs/cli.md: its option declarations (`optionHelp()`
 * of src/server/config.ts, imported only for this topic) and the config file's own variable.
 */
export function serverVariables(options: readonly ServerVariable[]): ServerVariable[] {
  return [
    { env: 'DOCSEARCH_CONFIG', flag: '--config', description: 'a JSON config file whose keys are the option names', defaultText: '$XDG_CONFIG_HOME/docsearch/config.json if present' },
    ...options,
  ];
}

/**
 * Each operator command's loader: its module is imported only when it is the command word, so client commands load
 * none. That module declares the command (options, help) and imports what its work needs (SQLite, LanceDB, ONNX…)
 * only once it runs, so its --help loads no store either (test/admin/operator-startup.test.ts).
 */
const LOADERS: Record<OperatorName, OperatorCommand['load']> = {
  serve: async (io, set) => (await import('./admin/serve.js')).serveCommand(io, set),
  users: async (io) => (await import('./admin/users.js')).usersCommand(io),
  groups: async (io) => (await import('./admin/groups.js')).groupsCommand(io),
  reindex: async (io) => (await import('./admin/reindex.js')).reindexCommand(io),
  clients: async (io) => (await import('./admin/clients.js')).clientsCommand(io),
  migrate: async (io) => (await import('./admin/migrate.js')).migrateCommand(io),
  backup: async (io) => (await import('./admin/backup/commands.js')).backupCommand(io),
  restore: async (io) => (await import('./admin/backup/commands.js')).restoreCommand(io),
};

/** Every operator command writes the library's files (or a backup of them): only its user may read what it creates. */
export const OPERATOR_COMMANDS: readonly OperatorCommand[] = Object.entries(OPERATOR_SUMMARIES).map(([name, summary]) => ({
  name,
  summary,
  load: (...args: Parameters<OperatorCommand['load']>) => {
    keepNewFilesPrivate();
    return LOADERS[name as OperatorName](...args);
  },
}));

/**
 * The composition root of the full package: client commands from cli/ and operator commands from
 * admin/. Returns the exit code; bin/docsearch sets it.
 */
export function main(argv: string[], io: IO = processIO()): Promise<number> {
  return runProgram(argv, io, {
    operators: OPERATOR_COMMANDS,
    serverVariables: async () => serverVariables((await import('./server/config.js')).optionHelp()),
  });
}
