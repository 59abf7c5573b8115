import type { Command } from 'commander';
import { complete } from '../completion/complete.js';
import type { Context } from '../context.js';
import { listAllProjects } from './shared/resolve-project.js';

/** A TAB must never hang: project names come from the server within this time, or not at all. */
const PROJECTS_TIMEOUT_MS = 1500;

/** Project names from the server the CLI would talk to; none on any error (no login, server down, slow). */
async function projectNames(ctx: Context): Promise<string[]> {
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), PROJECTS_TIMEOUT_MS).unref());
  const names = (async () => {
    try {
      return (await listAllProjects(ctx.http(), AbortSignal.timeout(PROJECTS_TIMEOUT_MS))).map((p) => p.name);
    } catch {
      return [];
    }
  })();
  return Promise.race([names, timeout]);
}

/**
 * `docsearch __complete <words…> <current>`: what the completion scripts call on TAB (cobra's `__complete`).
 * Runs before commander parses anything (the words are a command line being typed, not options for us). Prints
 * one `value<TAB>description` line per candidate, or the single line `:files` for path completion.
 */
export async function runComplete(program: Command, words: string[], ctx: Context): Promise<void> {
  const result = await complete(program, words.length ? words : [''], () => projectNames(ctx));
  ctx.io.stdout.write(result.files ? ':files\n' : result.candidates.map((c) => `${c.value}\t${c.description}\n`).join(''));
}
