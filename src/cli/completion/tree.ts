import type { Command } from 'commander';

/** A flattened view of the commander program: what completion scripts are generated from. */
export interface CommandNode {
  /** Words after `docsearch` ([] for the root). */
  path: string[];
  description: string;
  subcommands: Array<{ name: string; description: string }>;
  options: Array<{ long?: string; short?: string; description: string; takesValue: boolean; choices?: readonly string[] }>;
  /** Positional arguments are file paths (upload). */
  takesFiles: boolean;
}

const oneLine = (s: string) => s.split('\n')[0]!.trim();

/** Walks the tree in declaration order; hidden commands and the implicit `help` are left out. */
export function commandTree(program: Command): CommandNode[] {
  const out: CommandNode[] = [];
  const visit = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    out.push({
      path,
      description: oneLine(cmd.summary() || cmd.description()),
      subcommands: subs.map((c) => ({ name: c.name(), description: oneLine(c.summary() || c.description()) })),
      options: [
        ...cmd.options
          .filter((o) => !o.hidden)
          .map((o) => ({ long: o.long, short: o.short, description: oneLine(o.description), takesValue: o.required || o.optional, ...(o.argChoices ? { choices: o.argChoices } : {}) })),
        { long: '--help', short: '-h', description: 'display help', takesValue: false },
      ],
      takesFiles: cmd.registeredArguments.some((a) => /path/.test(a.name())),
    });
    for (const c of subs) visit(c, [...path, c.name()]);
  };
  visit(program, []);
  return out;
}
