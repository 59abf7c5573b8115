import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** `path` if it is there, else the nearest folder above it that is: where a folder about to be made would lie. */
export function nearestExisting(path: string): string {
  let at = resolve(path);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}
