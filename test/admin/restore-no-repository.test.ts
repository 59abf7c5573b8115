/**
 * `docsearch restore --from` a directory that does not exist (a typo) is a usage error (exit 2) naming it, and makes nothing there:
 * only `backup --to` creates a repository.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('docsearch restore from a repository that does not exist', () => {
  const dirs = tempDirs('docsearch-restore-missing');
  afterAll(() => dirs.removeAll());

  it('fails, naming it, with --list and with --to, and creates nothing', { timeout: 60_000 }, async () => {
    const parent = dirs.make('parent');
    const typo = join(parent, 'bakcups');
    for (const args of [['--list'], ['--to', join(parent, 'restored')]]) {
      const res = await runCli(['restore', '--from', typo, ...args]);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`error: --from: there is no directory ${typo}`);
      expect(existsSync(typo)).toBe(false);
      expect(readdirSync(parent)).toEqual([]);
    }
  });
});
