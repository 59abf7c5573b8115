import { accessSync, constants } from 'node:fs';
import { nearestExisting } from '../../core/existing-folder.js';

/**
 * Why `dir` (or the nearest folder above it that is there, where it would be made) cannot be written, or null. A
 * read-only file system otherwise surfaced as "ENOENT … mkdir" (or "unable to open database file") once work had begun:
 * `backup --to`, `restore --to` and `migrate --to` check it first.
 */
export function notWritable(dir: string): string | null {
  const at = nearestExisting(dir);
  try {
    accessSync(at, constants.W_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EROFS' ? `${at} is on a read-only file system` : code === 'EACCES' || code === 'EPERM' ? `${at} is not writable by this user` : (err as Error).message;
  }
}
