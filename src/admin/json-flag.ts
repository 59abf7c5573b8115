import type { Command } from 'commander';

/** Whether `--json` was given: it is also the program's global flag, which commander may hand to the program instead. */
export const wantsJson = (cmd: Command): boolean => Boolean(cmd.optsWithGlobals<{ json?: boolean }>().json);
