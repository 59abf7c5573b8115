/**
 * Under CI a missing engine or browser fails the run instead of skipping the tests that need it (issue 43, item 6);
 * on a developer's machine the same tests skip and say why. Runs vitest itself on one suite with the engine hidden.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';

function vitest(file: string, overrides: Record<string, string | undefined>): { code: number | null; out: string } {
  // A variable set to undefined is left out (spawn would pass the string "undefined").
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...overrides })) if (v !== undefined) env[k] = v;
  const res = spawnSync(join(REPO, 'node_modules/.bin/vitest'), ['run', '--project', 'embedded', '--reporter', 'verbose', file], {
    cwd: REPO,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: res.status, out: `${res.stdout}\n${res.stderr}` };
}

describe('a run cannot pass by skipping what it lacks', () => {
  it('chromium hidden: a browser suite fails under CI and skips, saying why, elsewhere', { timeout: 240_000 }, () => {
    const hidden = { DOCSEARCH_TEST_CHROMIUM: '/nonexistent/chromium' };
    const ci = vitest('test/web/api-keys.browser.test.ts', { ...hidden, CI: 'true' });
    expect(ci.code, ci.out).not.toBe(0);
    expect(ci.out).toContain('CI is set and /nonexistent/chromium is missing');
    const dev = vitest('test/web/api-keys.browser.test.ts', { ...hidden, CI: undefined });
    expect(dev.code, dev.out).toBe(0);
    expect(dev.out).toMatch(/skipped: \/nonexistent\/chromium is missing/);
  });

  it('PostgreSQL missing: the whole run fails under CI', { timeout: 240_000 }, () => {
    const ci = vitest('test/core/foreground.test.ts', { DOCSEARCH_TEST_PG_BIN: '/nonexistent/pg', CI: 'true' });
    expect(ci.code, ci.out).not.toBe(0);
    expect(ci.out).toContain('CI is set and PostgreSQL 15 server binaries not found in /nonexistent/pg');
  });
});
