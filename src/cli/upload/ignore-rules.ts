import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../../terminal/errors.js';

/** The ignore file read at the top of an uploaded folder (gitignore syntax, like .dockerignore: one file). */
export const IGNORE_FILE = '.docsearchignore';

/**
 * Ignored unless the ignore file says otherwise (`!node_modules/`): dotfiles and dot-folders (.git, .DS_Store, the
 * ignore file itself) and node_modules/ are never documents of a folder.
 */
export const DEFAULT_IGNORES = ['.*', 'node_modules/'] as const;

/** Decides which paths below a folder are left out; paths are `/`-separated and relative to it, folders end in `/`. */
export interface IgnoreRules {
  ignores(rel: string): boolean;
}

/**
 * The rules for `dir`: the defaults, then its `.docsearchignore` when it has one. The gitignore matching is the
 * `ignore` package's (what eslint and others use), not hand-written.
 */
export async function loadIgnoreRules(dir: string): Promise<IgnoreRules> {
  // Loaded when a folder is walked, not when the CLI starts.
  const { default: ignore } = await import('ignore');
  const rules = ignore().add([...DEFAULT_IGNORES]);
  const file = join(dir, IGNORE_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new CliError(`cannot read ${file} (${code ?? (err as Error).message})`, undefined, 'fix its permissions, or remove it');
  }
  if (text !== undefined) rules.add(text);
  return { ignores: (rel) => rules.ignores(rel) };
}
