/**
 * Searches are foreground work; ingestion (passage batches, chunk commits, index upkeep) is background work. Before
 * each step, background work waits for a moment with no search in flight, so a search rarely shares the cores with
 * a new batch or commit. The wait is bounded: a steady stream of searches slows ingestion but never stops it.
 */
export interface Yielder {
  /** Resolves when no foreground work is in flight, or after the gate's longest wait. */
  yieldToForeground(): Promise<void>;
}

/** Long enough for a search to finish (docs/BENCHMARKS.md#search-latency); short enough that ingestion keeps most of its pace. */
const DEFAULT_MAX_WAIT_MS = 250;

export class ForegroundGate implements Yielder {
  private active = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxWaitMs = DEFAULT_MAX_WAIT_MS) {}

  /** Marks foreground work as started; call the returned function (once is enough) when it ends. */
  enter(): () => void {
    this.active++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (--this.active === 0) this.release();
    };
  }

  /** Runs `fn` as foreground work. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const leave = this.enter();
    try {
      return await fn();
    } finally {
      leave();
    }
  }

  yieldToForeground(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, this.maxWaitMs);
      timer.unref();
      this.waiters.push(done);
    });
  }

  private release(): void {
    for (const w of [...this.waiters]) w();
  }
}
