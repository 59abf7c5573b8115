/**
 * The first start builds the model graph (graph-cache.ts); that build's few hundred MB must not stay in the daemon.
 * It did while the build ran in a worker thread: the daemon's peak and idle RSS after a first start were well above
 * a restart's. Now it runs in a child process that exits, so the daemon's own peak stays near a restart's idle.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeDir, startDaemon, untilHealth } from '../helpers/daemon.js';

const mib = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** The bar for the first start's idle RSS; a restart sits near 210 MiB, the in-thread build peaked near 470. */
const BAR_MIB = 250;

describe('first start memory', () => {
  it('builds the model graph outside the daemon: its peak and idle RSS stay under the bar', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-first-start-'));
    const cache = join(dataDir, 'models');
    try {
      const d = await startDaemon({ dataDir, args: ['--model-cache-dir', cache] });
      try {
        await untilHealth(d, (c) => c.embedder?.loaded === true, 'the model loaded', 300_000);
        const pid = d.proc.pid!;
        expect(mib(pid, 'VmHWM')).toBeLessThan(BAR_MIB);
        expect(mib(pid, 'VmRSS')).toBeLessThan(BAR_MIB);
        // The graph was built on this start, into the empty cache, and only the graph and its weights are left.
        expect(readdirSync(cache).map((f) => f.replace(/^[0-9a-f]{64}\.g\d+\./, '')).sort()).toEqual([expect.stringMatching(/^int8[su]\.onnx$/), expect.stringMatching(/^int8[su]\.weights$/)]);
      } finally {
        expect(await d.stop()).toBe(0);
      }
    } finally {
      removeDir(dataDir);
    }
  }, 360_000);
});
