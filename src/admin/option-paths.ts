/**
 * What `backup`, `restore` and `migrate` check of the paths their options name, before any file, folder or key is
 * made: a path that can never work (through a file, a directory that is not there to read from) is the operator's
 * typo, a usage error (exit 2) naming the option, as `serve` refuses its own (server/config.ts).
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../terminal/errors.js';

/** A value such as postgres://… or s3://…: never a path. */
export const looksLikeUrl = (value: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(value);

/** What is at `path`: a directory, something else, or nothing (ENOENT, or a parent that is not a directory). */
function at(path: string): 'directory' | 'other' | 'none' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'other';
  } catch (err) {
    // Anything else (EACCES…) is not the operator's typo: it stays the command's own error.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'none';
    throw err;
  }
}

/** The first of `path` and its parents that exists, when it is not a directory; null when that one is. */
function blockingFile(path: string): string | null {
  let p = path;
  while (at(p) === 'none' && dirname(p) !== p) p = dirname(p);
  return at(p) === 'directory' ? null : p;
}

/** A directory the command makes if missing (`--to`): `value` resolved, or a usage error when a file is in the way. */
export function directoryToMake(option: string, value: string): string {
  const path = resolve(value);
  const blocker = blockingFile(path);
  if (blocker) throw new UsageError(`${option}: ${blocker} is not a directory`);
  return path;
}

/** A directory the command reads (`--from`): `value` resolved, or a usage error when there is none. */
export function existingDirectory(option: string, value: string, hint?: string): string {
  const path = resolve(value);
  const blocker = blockingFile(path);
  if (blocker) throw new UsageError(`${option}: ${blocker} is not a directory`, hint);
  if (at(path) === 'none') throw new UsageError(`${option}: there is no directory ${path}`, hint);
  return path;
}

/** A file the command reads, or makes when missing in a directory that exists (`--key-file`). */
export function fileAt(option: string, value: string, opts: { make: boolean }): string {
  const path = resolve(value);
  const what = at(path);
  if (what === 'directory') throw new UsageError(`${option}: ${path} is a directory, not a file`);
  if (what === 'other') return path;
  if (!opts.make) {
    const blocker = blockingFile(path);
    throw new UsageError(`${option}: ${blocker ? `${blocker} is not a directory` : `there is no file ${path}`}`);
  }
  if (at(dirname(path)) !== 'directory') {
    const blocker = blockingFile(dirname(path));
    throw new UsageError(`${option}: ${blocker ? `${blocker} is not a directory` : `there is no directory ${dirname(path)} to make ${path} in`}`);
  }
  return path;
}
