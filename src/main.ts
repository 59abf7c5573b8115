import { Command, CommanderError } from 'commander';
import { registerClientCommands } from './cli/commands/index.js';
import { runComplete } from './cli/commands/complete.js';
import { applyProgramSettings } from './cli/commands/shared/command.js';
import { CliError, EXIT, EXIT_CODE_TABLE, InterruptedError } from './terminal/errors.js';
import { type IO, processIO } from './terminal/io.js';
import { environmentHelp, type ServerVariable } from './cli/environment.js';
import { splitJsonFields } from './cli/output/json.js';
import { VERSION } from './core/version.js';
import { NewerLibraryError } from './core/newer-library.js';

const EXIT_CODES_HELP = `\nExit codes:\n${EXIT_CODE_TABLE.map(([code, what]) => `  ${code}  ${what}`).join('\n')}\n`;
const TOPICS_HELP = '\nHelp topics:\n  docsearch help environment  the environment variables of the client and the server\n';

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

type SetPending = (p: Promise<number>) => void;

/**
 * Operator commands run on the server machine and load the server (SQLite, LanceDB, ONNX): seconds of start-up.
 * They are imported only when one of them runs, so client commands start as fast as node itself. Until then
 * each is listed by name and summary; test/cli/startup.test.ts checks these summaries match the real commands.
 */
export const OPERATOR_COMMANDS: ReadonlyArray<{ name: string; summary: string; load: (io: IO, setPending: SetPending) => Promise<Command> }> = [
  { name: 'serve', summary: 'run the docsearch daemon (API, OAuth server, web pages, ingestion)', load: async (io, set) => (await import('./admin/serve.js')).serveCommand(io, set) },
  { name: 'users', summary: 'manage accounts on this machine (operators)', load: async (io) => (await import('./admin/users.js')).usersCommand(io) },
  { name: 'reindex', summary: 're-embed the index with the configured embedder (daemon stopped)', load: async (io) => (await import('./admin/reindex.js')).reindexCommand(io) },
  { name: 'clients', summary: 'manage OAuth clients on this machine (operators)', load: async (io) => (await import('./admin/clients.js')).clientsCommand(io) },
  {
    name: 'migrate',
    summary: 'copy a library between a data directory and shared mode (daemons stopped)',
    load: async (io) => (await import('./admin/migrate.js')).migrateCommand(io),
  },
  { name: 'backup', summary: 'copy a running library into a backup (directory or s3://), incrementally', load: async (io) => (await import('./admin/backup/commands.js')).backupCommand(io) },
  { name: 'restore', summary: 'restore a backup into an empty data directory or shared-mode database and storage, verified', load: async (io) => (await import('./admin/backup/commands.js')).restoreCommand(io) },
];

/** Global options that take a value: their value is not the command word. */
const GLOBAL_VALUE_OPTIONS = new Set(['--server', '--token', '--jq']);

/** The command word of argv (`help serve` → serve; `__complete serve --p` → serve). */
export function commandWord(argv: string[]): string | undefined {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) words.push(a);
    if (words.length === 2) break;
  }
  return words[0] === 'help' || words[0] === '__complete' ? words[1] : words[0];
}

/** Every command and verb name (`projects`, `list` …): a word after --json that is one is not a field. */
function commandNames(cmd: Command, out = new Set<string>()): Set<string> {
  for (const c of cmd.commands) commandNames(c, out.add(c.name()));
  return out;
}

/**
 * The composition root: client commands from cli/ and operator commands from admin/.
 * Returns the exit code; bin/docsearch sets it. The only place errors become exit codes.
 */
export async function main(argv: string[], io: IO = processIO()): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = new Command('docsearch')
    .description('Semantic search for your document library: run the server, or talk to one.')
    .version(VERSION, '-v, --version')
    .option('--debug', 'print stack traces on errors')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXIT_CODES_HELP + TOPICS_HELP);
  const ctx = registerClientCommands(program, io);
  const word = commandWord(argv);
  for (const op of OPERATOR_COMMANDS) {
    if (op.name === word) {
      program.addCommand(await op.load(io, (p) => (pending = p)));
    } else {
      // Listed in help and completion; never run (the real command is loaded when its name is the command word).
      program.addCommand(new Command(op.name).summary(op.summary).description(op.summary).helpOption(false).allowUnknownOption().allowExcessArguments());
    }
  }
  applyProgramSettings(program, io);

  try {
    if (argv[0] === 'help' && (argv[1] === 'environment' || argv[1] === 'env') && argv.length === 2) {
      io.stdout.write(environmentHelp(serverVariables((await import('./server/config.js')).optionHelp())));
      return EXIT.ok;
    }
    if (argv[0] === '__complete') {
      await runComplete(program, argv.slice(1), ctx);
      return EXIT.ok;
    }
    await program.parseAsync(splitJsonFields(argv, commandNames(program)), { from: 'user' });
    return pending ? await pending : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof NewerLibraryError) {
      io.stderr.write(`error: ${err.message}\n`);
      return EXIT.newerLibrary;
    }
    if (err instanceof CliError) {
      io.stderr.write(`${err instanceof InterruptedError ? '' : 'error: '}${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`);
      return err.exitCode;
    }
    const e = err as Error;
    io.stderr.write(program.opts().debug ? `${e.stack ?? e}\n` : `error: ${e.message}\n(run with --debug for details)\n`);
    return EXIT.error;
  }
}
