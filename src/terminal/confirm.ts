import { CancelledError, UsageError } from './errors.js';
import { canPrompt, type IO, promptable } from './io.js';

export interface Destructive {
  /** What will be done, as a verb phrase: "delete document a.txt". */
  action: string;
  /** What follows from it, one sentence: "Anything using it stops working." */
  consequence?: string;
}

const capital = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}`;

/**
 * Asks before something destructive. On a terminal: "Delete document a.txt? <consequence>" (default no).
 * Elsewhere (CI, pipes) nobody can answer, so `--yes` is required and its absence is a usage error saying so.
 */
export async function confirmDestructive(io: IO, d: Destructive, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!canPrompt(io)) {
    // On a terminal, CI is what stops the prompt: saying "not on a terminal" there would send the person looking elsewhere.
    const why = promptable(io) ? 'CI is set' : 'not on a terminal';
    throw new UsageError(`${why}, so not asking: add --yes to ${d.action}`, d.consequence);
  }
  const { confirm } = await import('@inquirer/prompts');
  let ok: boolean;
  try {
    ok = await confirm({ message: `${capital(d.action)}?${d.consequence ? ` ${d.consequence}` : ''}`, default: false }, { input: io.stdin, output: io.stderr });
  } catch {
    throw new CancelledError();
  }
  if (!ok) throw new CancelledError();
}
