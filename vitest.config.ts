import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Daemon tests start real processes with the real model: two at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
