import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeDir } from './daemon.js';

/** The temp folders a suite makes (or takes over) as it goes, removed together when it ends. */
export function tempDirs(prefix: string): { make(what: string): string; keep(dir: string): void; removeAll(): void } {
  const dirs: string[] = [];
  return {
    make: (what) => {
      const dir = mkdtempSync(join(tmpdir(), `${prefix}-${what}-`));
      dirs.push(dir);
      return dir;
    },
    keep: (dir) => void dirs.push(dir),
    removeAll: () => {
      for (const dir of dirs.splice(0)) removeDir(dir);
    },
  };
}
