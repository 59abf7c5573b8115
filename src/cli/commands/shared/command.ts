import { Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../../../terminal/errors.js';
import type { IO } from '../../../terminal/io.js';
import { closest } from './suggest.js';

/**
 * A command with its summary and examples: `--help` of every client command ends with an
 * "Examples:" block (the all-commands test checks it).
 */
export function defineCommand(name: string, p: { summary: string; description?: string; examples: string[] }): Command {
  return new Command(name)
    .summary(p.summary)
    .description(p.description ?? `${p.summary[0]!.toUpperCase()}${p.summary.slice(1)}.`)
    .addHelpText('after', `\nExamples:\n${p.examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}

/**
 * Output, exit handling and help settings for a command and everything below it: errors go through `io`, help
 * shows the global flags (--server, --token, --json …) under each command, as gh's does.
 */
export function applyProgramSettings(cmd: Command, io: IO): void {
  cmd
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Most often a name or query typed without quotes (`projects create Q3 reports`): say how to type it.
      outputError: (s, write) => write(s.startsWith('error: too many arguments') ? `${s}hint: a name or query of several words goes in quotes ("Q3 reports")\n` : s),
    })
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError(true);
  for (const c of cmd.commands) applyProgramSettings(c, io);
}

/**
 * Adds `cmd` as the verb run when the group is given none (`docsearch projects` lists). Commander would hand an
 * unknown verb (`projects lst`) to it as an argument ("too many arguments"); here it is a usage error with a
 * suggestion instead.
 */
export function addDefaultSubcommand(group: Command, cmd: Command): void {
  cmd.allowExcessArguments(true).hook('preAction', (_cmd, action) => {
    const extra = action.args[0];
    if (extra === undefined) return;
    const verbs = group.commands.map((c) => c.name());
    const guess = closest(extra, verbs);
    throw new UsageError(
      `unknown command "${group.name()} ${extra}"`,
      guess ? `did you mean \`docsearch ${group.name()} ${guess}\`?` : `\`docsearch ${group.name()}\` takes one of: ${verbs.join(', ')}`,
    );
  });
  group.addCommand(cmd, { isDefault: true });
}

/** Parses an integer flag value for commander; a bad value is a usage error naming the flag. */
export function intOption(label: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${label} must be an integer from ${min} to ${max}`);
    return n;
  };
}

/** Collects a repeatable flag (`--project a --project b`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
