import { type Command, Argument } from 'commander';
import { commandTree } from '../completion/tree.js';
import { bashScript, fishScript, zshScript } from '../completion/scripts.js';
import type { Context } from '../context.js';
import { defineCommand } from './shared/command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionOptions {
  shell: Shell;
  program: Command;
}

export function script(shell: Shell, program: Command): string {
  const nodes = commandTree(program);
  return shell === 'bash' ? bashScript(nodes) : shell === 'zsh' ? zshScript(nodes) : fishScript(nodes);
}

export async function run(opts: CompletionOptions, ctx: Context): Promise<void> {
  ctx.io.stdout.write(script(opts.shell, opts.program));
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('completion', {
    summary: 'print a shell completion script',
    description: 'Print the completion script for bash, zsh or fish, generated from the command tree. The same scripts ship in completions/.',
    examples: [
      'docsearch completion bash > ~/.local/share/bash-completion/completions/docsearch',
      'docsearch completion zsh > "${fpath[1]}/_docsearch"',
      'docsearch completion fish > ~/.config/fish/completions/docsearch.fish',
    ],
  })
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell, _flags: unknown, cmd: Command) => {
      let root = cmd;
      while (root.parent) root = root.parent;
      return runF({ shell, program: root }, ctx);
    });
}
