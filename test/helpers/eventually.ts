/**
 * Waiting in tests: the one polling loop. Not vi.waitFor: bench/ imports these helpers (through the upload
 * helpers), and vitest cannot be imported outside its runner.
 */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WaitOptions {
  /** Between two probes; default 100 ms. */
  intervalMs?: number;
  /** A probe that throws is tried again (a server still starting), its last error named if time runs out. */
  retryErrors?: boolean;
}

/**
 * Polls `probe` until it gives a truthy value and returns it; throws, naming `what`,
 * when `timeoutMs` pass first. A probe that throws ends the wait with its error, unless `retryErrors`.
 */
export async function waitFor<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs: number, what: string, opts: WaitOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      if (!opts.retryErrors) throw err;
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(opts.intervalMs ?? 100);
  }
}

/** Whether `check` comes to hold within `ms` (for an `expect(…).toBe(true)`). */
export function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  return waitFor(check, ms, 'the check', { intervalMs: 50 }).then(
    () => true,
    (err: Error) => {
      if (err.message.startsWith('timed out')) return false;
      throw err;
    },
  );
}
