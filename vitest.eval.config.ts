import { defineConfig } from 'vitest/config';

/**
 * Evaluations that take too long for `npm test` (minutes on 2 cores) and write their results into docs/: files named
 * *.eval.ts, run by `npm run eval:*`.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.eval.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
