/**
 * First-page thumbnails of PDFs for the document page and `GET /api/v1/documents/{id}/thumbnail`, rendered on
 * demand in a few worker threads (thumbnail-worker.ts) with a time and heap limit (and pdf.js's pixel budget for
 * images, page-image.ts), one page per thread at a time, users served in turn, and kept in a small in-memory LRU
 * by content hash (WebP thumbnails are small: bench/results/web.md#thumbnail-figures; the same bytes always give
 * the same image).
 * A file that cannot be rendered, or takes too long, is remembered as such and not tried again. Its time is counted
 * from when the thread is ready: loading pdf.js and the canvas in a new thread can take seconds on a busy machine,
 * and a plain PDF timed out by that was remembered as not drawable until a restart. A thread that does not start
 * fails the render without remembering the file.
 */
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { AppError } from '../core/errors.js';
import type { ThumbnailReply, ThumbnailRequest } from './thumbnail-worker.js';

export interface ThumbnailOptions {
  /** Image width in pixels (default 320: sharp at 160 CSS pixels on a 2× screen). */
  width?: number;
  /**
   * Longest a render may take before its thread is ended and the file remembered as not drawable (default
   * 4 000 ms: a real first page takes well under a second; a hostile one must not hold a thread for long).
   */
  timeoutMs?: number;
  /** Longest a new thread may take to load before the render it was started for gives up (default 30 000 ms). */
  startTimeoutMs?: number;
  /** V8 heap limit of each thread in MB (default 128). Native canvas memory is bounded by the pixel budgets. */
  maxOldGenerationSizeMb?: number;
  /** A thread exits after this long without work (default 30 000 ms), which also returns its memory. */
  idleMs?: number;
  /** Thumbnails (and failures) remembered (default 256). */
  cacheEntries?: number;
  /** Threads drawing at once (default 2). One user draws on at most threads − 1 of them, so others get one. */
  threads?: number;
  /** Renders waiting in all, beyond those drawing, before more are refused with 503 (default 16). */
  maxWaiting?: number;
  /** Renders one user may have waiting before theirs are refused with 503 (default 4). */
  maxWaitingPerOwner?: number;
  workerUrl?: URL;
}

interface Job {
  key: string;
  page: number;
  read: () => Promise<Uint8Array>;
  resolve(image: Uint8Array | null): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker | undefined;
  /** Whether the thread loaded (its `ready` message came), false when it exited or took too long first. */
  ready: Promise<boolean> | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  busy: boolean;
}

/** Seconds a client is told to wait after a 503. */
const RETRY_AFTER_S = 5;

const overloaded = (why: string): AppError =>
  new AppError('service_unavailable', `${why}; try again in a few seconds`, { expose: true, logLevel: 'warn', headers: { 'Retry-After': String(RETRY_AFTER_S) } });

export class ThumbnailRenderer {
  readonly width: number;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly heapMb: number;
  private readonly idleMs: number;
  private readonly maxWaiting: number;
  private readonly maxWaitingPerOwner: number;
  private readonly perOwnerRunning: number;
  private readonly workerUrl: URL;
  /** WebP bytes, or false for a file that could not be rendered. */
  private readonly cache: LRUCache<string, Uint8Array | false>;
  /** Renders asked for and not yet answered, by content: a second request for the same file shares the first. */
  private readonly pending = new Map<string, Promise<Uint8Array | null>>();
  /** Each owner's waiting renders; the map's order is whose turn it is (served owners move to the back). */
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Map<string, number>();
  private readonly slots: Slot[];
  private waiting = 0;
  private nextId = 0;
  private closed = false;
  /** Threads started so far (tests: a timed-out render ends its thread). */
  started = 0;

  constructor(opts: ThumbnailOptions = {}) {
    this.width = opts.width ?? 320;
    this.timeoutMs = opts.timeoutMs ?? 4_000;
    this.startTimeoutMs = opts.startTimeoutMs ?? 30_000;
    this.heapMb = opts.maxOldGenerationSizeMb ?? 128;
    this.idleMs = opts.idleMs ?? 30_000;
    this.cache = new LRUCache({ max: opts.cacheEntries ?? 256 });
    this.maxWaiting = opts.maxWaiting ?? 16;
    this.maxWaitingPerOwner = opts.maxWaitingPerOwner ?? 4;
    const threads = Math.max(1, opts.threads ?? 2);
    this.perOwnerRunning = Math.max(1, threads - 1);
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, ready: undefined, idleTimer: undefined, busy: false }));
    this.workerUrl = opts.workerUrl ?? new URL('./thumbnail-worker.js', import.meta.url);
  }

  /**
   * The WebP image of page `page` (default the first) of the PDF with content hash `sha256` (its bytes come from
   * `read` when not cached), or null when it cannot be rendered (broken, hostile, too slow, or no such page).
   * `owner` (the user) gets its turn round-robin with the other owners waiting, so one user's many renders do not
   * hold back another's.
   */
  async render(sha256: string, read: () => Promise<Uint8Array>, opts: { owner?: string; page?: number } = {}): Promise<Uint8Array | null> {
    const page = opts.page ?? 1;
    const key = page === 1 ? sha256 : `${sha256}:${page}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached || null;
    const shared = this.pending.get(key);
    if (shared) return shared;
    if (this.closed) throw new AppError('service_unavailable', 'the server is shutting down', { expose: true, logLevel: 'warn' });
    const owner = opts.owner ?? '';
    const queue = this.queues.get(owner) ?? [];
    if (queue.length >= this.maxWaitingPerOwner) throw overloaded(`you have ${queue.length} previews waiting to be drawn`);
    if (this.waiting >= this.maxWaiting) throw overloaded('too many previews are waiting to be drawn');
    const run = new Promise<Uint8Array | null>((resolve, reject) => queue.push({ key, page, read, resolve, reject }));
    if (!this.queues.has(owner)) this.queues.set(owner, queue);
    this.waiting++;
    this.pending.set(key, run);
    void run.finally(() => this.pending.delete(key)).catch(() => undefined);
    this.pump();
    return run;
  }

  /** Starts waiting renders on free threads: owners in turn, none on more than `perOwnerRunning` threads. */
  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy || this.closed) continue;
      const owner = [...this.queues.keys()].find((o) => (this.running.get(o) ?? 0) < this.perOwnerRunning);
      if (owner === undefined) return;
      const queue = this.queues.get(owner)!;
      const job = queue.shift()!;
      this.waiting--;
      this.queues.delete(owner); // to the back of the turn order, or gone when nothing waits
      if (queue.length > 0) this.queues.set(owner, queue);
      this.running.set(owner, (this.running.get(owner) ?? 0) + 1);
      slot.busy = true;
      void this.runJob(slot, job).finally(() => {
        slot.busy = false;
        const n = (this.running.get(owner) ?? 1) - 1;
        if (n > 0) this.running.set(owner, n);
        else this.running.delete(owner);
        this.pump();
      });
    }
  }

  private async runJob(slot: Slot, job: Job): Promise<void> {
    try {
      const again = this.cache.peek(job.key); // drawn while this one waited
      if (again !== undefined) return job.resolve(again || null);
      const image = await this.draw(slot, await job.read(), job.page);
      // undefined: the thread never started, which says nothing of the file.
      if (image !== undefined) this.cache.set(job.key, image ?? false);
      job.resolve(image ?? null);
    } catch (err) {
      job.reject(err);
    }
  }

  private thread(slot: Slot): { worker: Worker; ready: Promise<boolean> } {
    clearTimeout(slot.idleTimer);
    if (!slot.worker || !slot.ready) {
      this.started++;
      const worker = new Worker(this.workerUrl, { resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: 32 }, stdout: true, stderr: true });
      worker.stdout.resume();
      worker.stderr.resume();
      worker.unref();
      worker.once('exit', () => {
        if (slot.worker === worker) slot.worker = undefined;
      });
      slot.worker = worker;
      slot.ready = new Promise<boolean>((resolve) => {
        const settle = (ok: boolean) => {
          clearTimeout(timer);
          worker.off('message', onMessage).off('exit', onExit);
          resolve(ok);
        };
        const onMessage = (msg: ThumbnailReply | { ready: true }) => {
          if ('ready' in msg) settle(true);
        };
        const onExit = () => settle(false);
        const timer = setTimeout(() => settle(false), this.startTimeoutMs);
        worker.on('message', onMessage).once('exit', onExit);
      });
    }
    return { worker: slot.worker, ready: slot.ready };
  }

  /** The image, null when the file cannot be drawn (in time), undefined when the thread did not start. */
  private async draw(slot: Slot, data: Uint8Array, page: number): Promise<Uint8Array | null | undefined> {
    const { worker, ready } = this.thread(slot);
    if (!(await ready)) {
      if (slot.worker === worker) slot.worker = undefined;
      void worker.terminate();
      return undefined;
    }
    const id = ++this.nextId;
    return new Promise<Uint8Array | null>((resolve) => {
      const done = (image: Uint8Array | null, keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onGone).off('exit', onGone);
        if (!keep) {
          // Over time or out of memory: the thread goes, and with it whatever it held.
          if (slot.worker === worker) slot.worker = undefined;
          void worker.terminate();
        } else if (!this.closed) {
          slot.idleTimer = setTimeout(() => void this.stopThread(slot), this.idleMs).unref();
        }
        resolve(image);
      };
      const onMessage = (reply: ThumbnailReply | { ready: true }) => {
        if ('id' in reply && reply.id === id) done(reply.ok ? reply.image : null, true);
      };
      const onGone = () => done(null, false);
      const timer = setTimeout(() => done(null, false), this.timeoutMs);
      worker.on('message', onMessage).once('error', onGone).once('exit', onGone);
      worker.postMessage({ id, data, page, width: this.width, maxHeight: this.width * 2 } satisfies ThumbnailRequest);
    });
  }

  private async stopThread(slot: Slot): Promise<void> {
    const worker = slot.worker;
    slot.worker = undefined;
    await worker?.terminate();
  }

  /** Ends the threads; renders waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) for (const job of queue) job.reject(new AppError('service_unavailable', 'the server is shutting down', { expose: true, logLevel: 'warn' }));
    this.queues.clear();
    this.waiting = 0;
    for (const slot of this.slots) clearTimeout(slot.idleTimer);
    await Promise.all(this.slots.map((slot) => this.stopThread(slot)));
  }
}
