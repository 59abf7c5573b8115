import { Command, InvalidArgumentError } from 'commander';

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
