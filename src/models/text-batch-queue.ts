/**
 * Schedules a local model's texts in micro-batches built from everything that is waiting (batch-queue.ts, for
 * remote providers, runs each caller's batches as they come). Two lanes run side by side:
 *
 * - `high` (search queries) runs on its own (`run(batch, 'high')`, the embedder gives it its own session),
 *   so a query never waits behind a batch of passages;
 * - `low` (passages) runs one batch at a time. The waiting requests take turns (round-robin) giving each
 *   batch its first text, so a huge document's thousands of passages cannot keep a one-page upload waiting; the
 *   other seats go to the waiting texts of about that length, whoever they belong to (the turn's own first, then
 *   the oldest request's): many small documents share one forward pass, with little padding.
 *
 * A lane's batches hold at most its batch size (the built-in model runs one query a pass: minilm-embedder.ts).
 * One batch in flight per lane bounds memory (a 16×256 batch's activations, not a whole upload's).
 * `maxPending` bounds queued texts; beyond it callers get a transient error and the ingest queue retries later.
 */
import type { Yielder } from '../core/foreground.js';
import type { Priority } from './batch-queue.js';
import { ModelError } from './errors.js';

/** Sizes (characters) this close count as equal when a batch is filled: ~16 tokens of padding at most. */
const SIZE_BUCKET = 64;
/** The share of a batch's padded size that may be padding. */
const MAX_PADDING = 0.1;

export interface BatchItem {
  /** A cheap proxy for the item's token count (characters): batches group items of similar size. */
  readonly size: number;
}

interface Request<T extends BatchItem> {
  left: T[];
  /** Items of this request not finished yet (queued or running). */
  open: number;
  failed: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Lane<T extends BatchItem> {
  requests: Request<T>[];
  running: boolean;
  /** Round-robin position among waiting requests. */
  turn: number;
}

export class TextBatchQueue<T extends BatchItem> {
  private readonly lanes: Record<Priority, Lane<T>> = {
    high: { requests: [], running: false, turn: 0 },
    low: { requests: [], running: false, turn: 0 },
  };
  private pending = 0;
  private readonly batchSizes: Record<Priority, number>;

  constructor(
    private readonly provider: string,
    private readonly maxPending: number,
    /** Texts a batch holds at most: one figure for both lanes, or one for each. */
    batchSize: number | Record<Priority, number>,
    private readonly run: (batch: T[], priority: Priority) => Promise<void>,
    /** Passage batches wait for a moment without a search in flight (see core/foreground.ts). */
    private readonly background?: Yielder,
  ) {
    this.batchSizes = typeof batchSize === 'number' ? { high: batchSize, low: batchSize } : batchSize;
  }

  /** Texts waiting or running in either lane. */
  get queued(): number {
    return this.pending;
  }

  /** Queues `items`; resolves once `run` has processed all of them, rejects with the first batch error. */
  push(priority: Priority, items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    if (this.pending + items.length > this.maxPending && this.pending > 0) {
      return Promise.reject(new ModelError(this.provider, `embedding queue full (${this.pending} texts pending)`, { transient: true }));
    }
    this.pending += items.length;
    return new Promise<void>((resolve, reject) => {
      // Longest first: the seed of each batch is a request's longest waiting text.
      const left = [...items].sort((a, b) => b.size - a.size);
      this.lanes[priority].requests.push({ left, open: items.length, failed: false, resolve, reject });
      this.drain(priority);
    });
  }

  private drain(priority: Priority): void {
    const lane = this.lanes[priority];
    if (lane.running || !lane.requests.some((r) => r.left.length > 0)) return;
    lane.running = true;
    if (priority === 'low' && this.background) {
      void this.background.yieldToForeground().then(() => this.start(priority));
    } else {
      this.start(priority);
    }
  }

  private start(priority: Priority): void {
    const lane = this.lanes[priority];
    // Picked only now: texts that arrived during the wait can share the batch.
    const picked = this.pick(lane, this.batchSizes[priority]);
    if (picked.length === 0) {
      lane.running = false;
      return;
    }
    const batch = picked.map((p) => p.item);
    void this.run(batch, priority)
      .then(
        () => {
          for (const { request } of picked) {
            if (--request.open === 0 && !request.failed) request.resolve();
          }
        },
        (err: unknown) => {
          for (const { request } of picked) {
            request.open--;
            if (request.failed) continue;
            // The rest of a failed request is dropped: its caller has the error already.
            request.failed = true;
            this.pending -= request.left.length;
            request.open -= request.left.length;
            request.left = [];
            request.reject(err);
          }
        },
      )
      .finally(() => {
        this.pending -= picked.length;
        lane.requests = lane.requests.filter((r) => r.left.length > 0);
        lane.running = false;
        // setImmediate between batches: the event loop gets a turn even when batches are back-to-back.
        setImmediate(() => this.drain(priority));
      });
  }

  private pick(lane: Lane<T>, batchSize: number): { request: Request<T>; item: T }[] {
    const waiting = lane.requests.filter((r) => r.left.length > 0);
    if (waiting.length === 0) return [];
    const turn = waiting[lane.turn++ % waiting.length]!;
    const seed = turn.left.shift()!;
    const picked = [{ request: turn, item: seed }];
    // One text a pass: no seats to fill, and no sort of every waiting text.
    if (batchSize === 1) return picked;
    // The other seats: waiting texts of about the seed's length (a batch costs its longest text times its size),
    // and among those the turn's own first, then the oldest request's, so documents finish one after another
    // instead of all together at the end.
    const candidates: { request: Request<T>; item: T; bucket: number; own: number; age: number }[] = [];
    waiting.forEach((request, age) => {
      for (const item of request.left) {
        candidates.push({ request, item, bucket: Math.floor(Math.abs(item.size - seed.size) / SIZE_BUCKET), own: request === turn ? 0 : 1, age });
      }
    });
    candidates.sort((a, b) => a.bucket - b.bucket || a.own - b.own || a.age - b.age);
    // A seat is taken only while the batch's padding stays small: a smaller batch costs less than padded rows.
    const chosen: typeof candidates = [];
    let longest = seed.size;
    let total = seed.size;
    for (const c of candidates) {
      if (chosen.length === batchSize - 1) break;
      const rows = chosen.length + 2;
      const padded = rows * Math.max(longest, c.item.size);
      if (padded - (total + c.item.size) > MAX_PADDING * padded) continue;
      chosen.push(c);
      longest = Math.max(longest, c.item.size);
      total += c.item.size;
    }
    const taken = new Set(chosen.map((c) => c.item));
    for (const c of chosen) picked.push({ request: c.request, item: c.item });
    for (const request of waiting) if (request.left.some((i) => taken.has(i))) request.left = request.left.filter((i) => !taken.has(i));
    return picked;
  }
}
