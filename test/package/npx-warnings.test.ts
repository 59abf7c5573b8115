/**
 * `npx docsearch` in a checkout prints nothing but docsearch's own output (issue 61, Low 18): the repository's
 * .npmrc holds no key npm does not know (npm 11 warns "Unknown project config" on every run for one). onnxruntime-node's
 * install script, which that key used to skip, stays off through `allowScripts` in package.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';
import { execFileAsync, userEnv } from './install.js';

describe('npx docsearch in a checkout', () => {
  it('prints no npm warning', { timeout: 180_000 }, async () => {
    const { stdout, stderr } = await execFileAsync('npx', ['--no-install', 'docsearch', '--version'], { cwd: REPO, env: userEnv(), encoding: 'utf8' });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(stderr).toBe('');
  });

  it("keeps onnxruntime-node's install script off (it would fetch CUDA libraries from outside the registry)", () => {
    expect(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).allowScripts['onnxruntime-node']).toBe(false);
  });
});
