import { CancelledError, UsageError } from '../../errors.js';
import { canPrompt, type IO } from '../../io.js';

/**
 * Asks before something destructive. On a terminal: a yes/no prompt (default no). Elsewhere
 * (CI, pipes) nobody can answer, so `--yes` is required and its absence is a usage error.
 */
export async function confirmDestructive(io: IO, question: string, yes: boolean | undefined, flagHint: string): Promise<void> {
  if (yes) return;
  if (!canPrompt(io)) throw new UsageError(`${question.replace(/\?$/, '')}: confirmation needed`, `add --yes to ${flagHint} without a prompt`);
  const { confirm } = await import('@inquirer/prompts');
  let ok: boolean;
  try {
    ok = await confirm({ message: question, default: false }, { input: io.stdin, output: io.stderr });
  } catch {
    throw new CancelledError();
  }
  if (!ok) throw new CancelledError();
}
