/**
 * Copies of the kept search libraries (bench/.cache/search, built by bench:search) for a run to write into.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A copy of a data dir for `dst`: LanceDB files as hard links (it writes new files and renames, never rewrites
 * one in place), everything else (SQLite) copied.
 */
export function linkTree(src: string, dst: string, inLance = false): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const [from, to] = [join(src, e.name), join(dst, e.name)];
    if (e.isDirectory()) linkTree(from, to, inLance || e.name === 'lancedb');
    else if (inLance) linkSync(from, to);
    else copyFileSync(from, to);
  }
}
