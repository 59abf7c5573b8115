import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_DOC_PATH, README_PATH, renderCliDoc, renderReadme } from '../../scripts/gen-cli-docs.js';

describe('docs/cli.md and the README match the command tree', () => {
  it('docs/cli.md: command reference, --json fields and exit codes are current (regenerate with `npm run docs:cli`)', () => {
    const committed = readFileSync(CLI_DOC_PATH, 'utf8');
    expect(renderCliDoc(committed)).toBe(committed);
  });

  it('README: the CLI synopsis and exit codes are current (regenerate with `npm run docs:cli`)', () => {
    const committed = readFileSync(README_PATH, 'utf8');
    expect(renderReadme(committed)).toBe(committed);
  });
});
