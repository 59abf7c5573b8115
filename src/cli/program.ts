import { Command, CommanderError } from 'commander';
import { addGlobalOptions } from './commands/global-options.js';
import { applyProgramSettings } from './commands/shared/command.js';
import { CliError, EXIT, EXIT_CODE_TABLE, InterruptedError } from '../terminal/errors.js';
import type { IO } from '../terminal/io.js';
import { environmentHelp, type ServerVariable } from './environment.js';
import { splitJsonFields } from './output/json.js';
import { NewerLibraryError } from '../core/newer-library.js';
import { terminalSafe } from '../core/unsafe-text.js';
import { VERSION } from '../core/version.js';

const EXIT_CODES_HELP = `\nExit codes:\n${EXIT_CODE_TABLE.map(([code, what]) => `  ${code}  ${what}`).join('\n')}\n`;
const TOPICS_HELP = '\nHelp topics:\n  docsearch help environment  the environment variables of the client and the server\n';

export type SetPending = (p: Promise<number>) => void;

/** An operator command as the program lists it; `load` builds the real command when its name is the command word. */
export interface OperatorCommand {
  name: string;
  summary: string;
  load: (io: IO, setPending: SetPending) => Promise<Command>;
}

/** What a composition root gives the program: its operator commands, and the server's variables when it has a server. */
export interface ProgramParts {
  operators: readonly OperatorCommand[];
  /** The server's variables for `docsearch help environment`; undefined where the server is not installed. */
  serverVariables?: () => Promise<ServerVariable[]>;
}

/** An operator command's stand-in: listed in help and completion, taking any arguments, running nothing. */
export function listedOperator(op: Pick<OperatorCommand, 'name' | 'summary'>): Command {
  return new Command(op.name).summary(op.summary).description(op.summary).helpOption(false).allowUnknownOption().allowExcessArguments();
}

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

/**
 * Builds the commander program (client commands from cli/, the operator commands `parts` gives) and runs argv.
 * Returns the exit code; the launcher sets it. The only place errors become exit codes.
 */
export async function runProgram(argv: string[], io: IO, parts: ProgramParts): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = new Command('docsearch')
    .description('Semantic search for your document library: run the server, or talk to one.')
    .version(VERSION, '-v, --version')
    .option('--debug', 'print stack traces on errors')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXIT_CODES_HELP + TOPICS_HELP);
  const word = commandWord(argv);
  // An operator command runs without the client commands: their modules (about a hundred, 0.2 s of CPU) are loaded
  // for a client command, the program's help and completion only (test/admin/operator-startup.test.ts).
  const operator = argv[0] !== '__complete' && parts.operators.some((op) => op.name === word);
  const ctx = operator ? (addGlobalOptions(program, io), undefined) : (await import('./commands/index.js')).registerClientCommands(program, io);
  for (const op of parts.operators) {
    if (op.name === word) {
      program.addCommand(await op.load(io, (p) => (pending = p)));
    } else {
      // Listed in help and completion; never run (the real command is loaded when its name is the command word).
      program.addCommand(listedOperator(op));
    }
  }
  applyProgramSettings(program, io);

  try {
    if (argv[0] === 'help' && (argv[1] === 'environment' || argv[1] === 'env') && argv.length === 2) {
      io.stdout.write(environmentHelp(parts.serverVariables ? await parts.serverVariables() : undefined));
      return EXIT.ok;
    }
    if (argv[0] === '__complete' && ctx) {
      await (await import('./commands/complete.js')).runComplete(program, argv.slice(1), ctx);
      return EXIT.ok;
    }
    await program.parseAsync(splitJsonFields(argv, program), { from: 'user' });
    return pending ? await pending : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof NewerLibraryError) {
      io.stderr.write(`error: ${terminalSafe(err.message)}\n`);
      return EXIT.newerLibrary;
    }
    if (err instanceof CliError) {
      // A message may quote the server (an API error's words): shown, never obeyed.
      io.stderr.write(`${err instanceof InterruptedError ? '' : 'error: '}${terminalSafe(err.message)}\n${err.hint ? `hint: ${terminalSafe(err.hint)}\n` : ''}`);
      return err.exitCode;
    }
    const e = err as Error;
    io.stderr.write(terminalSafe(program.opts().debug ? `${e.stack ?? e}\n` : `error: ${e.message}\n(run with --debug for details)\n`));
    return EXIT.error;
  }
}
