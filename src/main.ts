import { Command, CommanderError } from 'commander';
import { registerClientCommands } from './cli/commands/index.js';
import { CliError, EXIT } from './cli/errors.js';
import { type IO, processIO } from './cli/io.js';
import { VERSION } from './core/version.js';
import { clientsCommand } from './server/commands/clients.js';
import { reindexCommand } from './server/commands/reindex.js';
import { serveCommand } from './server/commands/serve.js';
import { usersCommand } from './server/commands/users.js';

const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  error
  2  usage error (bad flags or arguments)
  4  authentication needed (run \`docsearch login\`)
`;

/**
 * The composition root: client commands from cli/ and operator commands from server/commands/.
 * Returns the exit code; bin/docsearch sets it. The only place errors become exit codes.
 */
export async function main(argv: string[], io: IO = processIO()): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = new Command('docsearch')
    .description('Semantic search for your document library: run the server, or talk to one.')
    .version(VERSION, '-v, --version')
    .option('--debug', 'print stack traces on errors')
    .showSuggestionAfterError(true)
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .addHelpText('after', EXIT_CODES_HELP);
  registerClientCommands(program, io);
  program.addCommand(serveCommand(io, (p) => (pending = p)));
  program.addCommand(usersCommand(io));
  program.addCommand(reindexCommand(io));
  program.addCommand(clientsCommand(io));
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return pending ? await pending : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      io.stderr.write(`error: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`);
      return err.exitCode;
    }
    const e = err as Error;
    io.stderr.write(program.opts().debug ? `${e.stack ?? e}\n` : `error: ${e.message}\n(run with --debug for details)\n`);
    return EXIT.error;
  }
}
