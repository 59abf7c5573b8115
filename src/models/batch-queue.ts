/**
 * Runs model work one micro-batch at a time, queries before passages. One batch in flight bounds
 * memory (a 16×256 batch's activations, not a whole upload's) and lets a search query overtake a
 * long ingest instead of waiting behind it. `maxPending` bounds queued work; beyond it callers get a
 * transient error and the ingest queue retries later.
 */
import { ModelError } from './errors.js';

export type Priority = 'high' | 'low';

interface Job {
  size: number;
  run: () => Promise<void>;
}

export class BatchQueue {
  private readonly high: Job[] = [];
  private readonly low: Job[] = [];
  private pending = 0;
  private running = false;

  constructor(
    private readonly provider: string,
    private readonly maxPending: number,
  ) {}

  /** Queues `task`, counting `size` items (texts) against the bound; resolves with its result. */
  push<T>(priority: Priority, size: number, task: () => Promise<T>): Promise<T> {
    if (this.pending + size > this.maxPending && this.pending > 0) {
      return Promise.reject(
        new ModelError(this.provider, `embedding queue full (${this.pending} texts pending)`, { transient: true }),
      );
    }
    this.pending += size;
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        size,
        run: () => task().then(resolve, reject),
      };
      (priority === 'high' ? this.high : this.low).push(job);
      this.drain();
    });
  }

  private drain(): void {
    if (this.running) return;
    const job = this.high.shift() ?? this.low.shift();
    if (!job) return;
    this.running = true;
    void job.run().finally(() => {
      this.pending -= job.size;
      this.running = false;
      // setImmediate between batches: the event loop gets a turn even when batches are back-to-back.
      setImmediate(() => this.drain());
    });
  }
}
