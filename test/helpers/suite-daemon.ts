import { afterAll, beforeAll, expect } from 'vitest';
import { type Daemon, removeDir, type StartOptions, startDaemon } from './daemon.js';

/**
 * One daemon for the enclosing describe block: started before its tests, then `ready` runs (users,
 * fixtures); stopped after them, expecting exit code 0 unless `cleanExit` is false, and its data dir
 * removed. `setupTimeoutMs` raises the hook's time limit for a long `ready`. Lives apart from daemon.ts because the benches import that file outside vitest.
 */
export function daemonForSuite(ready: (d: Daemon) => Promise<void> | void, opts: StartOptions & { cleanExit?: boolean; setupTimeoutMs?: number } = {}): void {
  const { cleanExit = true, setupTimeoutMs, ...start } = opts;
  let d: Daemon | undefined;
  beforeAll(async () => {
    d = await startDaemon(start);
    await ready(d);
  }, setupTimeoutMs);
  afterAll(async () => {
    if (!d) return;
    const code = await d.stop();
    if (cleanExit) expect(code).toBe(0);
    removeDir(d.dataDir);
  });
}
