import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from './daemon.js';

/** Every .ts file under src/, as [path from the repository, text]: for tests that hold a doc's table to the code. */
export function sourceFiles(dir = join(REPO, 'src')): [string, string][] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [[relative(REPO, path), readFileSync(path, 'utf8')] as [string, string]] : [];
  });
}
