/**
 * README.md's Configuration table is written by hand (docs/configuration.md is generated): each row's flag, its
 * environment variable and, where the row gives one value, its default must be what src/server/config.ts declares.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionHelp } from '../../src/server/config.js';
import { REPO } from '../helpers/daemon.js';

describe("README's Configuration table", () => {
  it('names real options, their DOCSEARCH_* variables and their defaults', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Web'));
    const rows = section.split('\n').filter((line) => line.startsWith('| `--'));
    expect(rows.length).toBeGreaterThan(15);
    let defaultsCompared = 0;
    const options = new Map(optionHelp().map((o) => [o.flag.split(' ')[0]!, o]));
    for (const row of rows) {
      const [flagCell, envCell, defaultCell] = row.split(' | ').map((c) => c.replace(/^\| /, ''));
      const flag = /^`(--[a-z0-9-]+)/.exec(flagCell!)![1]!;
      // --config is read before the options (it says where they are), so it is not one of them.
      if (flag === '--config') {
        expect(envCell).toBe('`DOCSEARCH_CONFIG`');
        continue;
      }
      const option = options.get(flag);
      expect(option, `${flag} is not an option of docsearch serve`).toBeDefined();
      expect(envCell, flag).toBe(`\`${option!.env}\``);
      const single = /^`([^`]+)`$/.exec(defaultCell!)?.[1];
      if (single === undefined || option!.defaultText === undefined) continue;
      expect(single, `${flag}'s default`).toBe(option!.defaultText);
      defaultsCompared++;
    }
    expect(defaultsCompared).toBeGreaterThanOrEqual(10);
  });
});
