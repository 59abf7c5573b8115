import { Argument, type Command } from 'commander';
import { bashScript, fishScript, zshScript } from '../completion/scripts.js';
import type { Context } from '../context.js';
import { defineCommand } from './shared/command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export function script(shell: Shell): string {
  return shell === 'bash' ? bashScript() : shell === 'zsh' ? zshScript() : fishScript();
}

export async function run(opts: { shell: Shell }, ctx: Context): Promise<void> {
  ctx.io.stdout.write(script(opts.shell));
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('completion', {
    summary: 'print a shell completion script',
    description:
      'Print the completion script for bash, zsh or fish. On TAB the script asks `docsearch __complete` what fits: commands, flags, ' +
      'values of flags such as --mode, and project names from the server you are logged in to (within 1.5 s, silently nothing on error). ' +
      'The same scripts ship in completions/.',
    examples: [
      'docsearch completion bash > ~/.local/share/bash-completion/completions/docsearch',
      'docsearch completion zsh > "${fpath[1]}/_docsearch"',
      'docsearch completion fish > ~/.config/fish/completions/docsearch.fish',
    ],
  })
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => runF({ shell }, ctx));
}
