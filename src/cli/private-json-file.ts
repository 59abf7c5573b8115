import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CliError } from '../terminal/errors.js';

/** A JSON file of the CLI's own (settings, file-backed credentials): undefined when it does not exist. */
export function readJsonFile(path: string, hint: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliError(`cannot read ${path}: not valid JSON`, undefined, hint);
  }
}

/**
 * Writes under a temporary name with mode 0600 from the start, then renames: the file is never briefly
 * world-readable, and a crash never leaves half a file.
 */
export function writePrivateJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600); // the umask may have narrowed the mode further, never widened it; set it exactly
  renameSync(tmp, path);
}
