/**
 * First-page thumbnails of PDFs for the document page and `GET /api/v1/documents/{id}/thumbnail`, rendered on
 * demand in one worker thread (thumbnail-worker.ts) with a time and heap limit, one page at a time, and kept in
 * a small in-memory LRU by content hash (a WebP thumbnail is 5–30 KB; the same bytes always give the same image).
 * A file that cannot be rendered, or takes too long, is remembered as such and not tried again.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../core/errors.js';
import type { ThumbnailReply, ThumbnailRequest } from './thumbnail-worker.js';

export interface ThumbnailOptions {
  /** Image width in pixels (default 320: sharp at 160 CSS pixels on a 2× screen). */
  width?: number;
  /** Longest a render may take before its thread is ended (default 20 000 ms). */
  timeoutMs?: number;
  /** V8 heap limit of the thread in MB (default 256). */
  maxOldGenerationSizeMb?: number;
  /** The thread exits after this long without work (default 30 000 ms). */
  idleMs?: number;
  /** Thumbnails (and failures) remembered (default 256). */
  cacheEntries?: number;
  /** Renders waiting beyond the one running before more are refused with 503 (default 16). */
  maxWaiting?: number;
  workerUrl?: URL;
}

export class ThumbnailRenderer {
  readonly width: number;
  private readonly timeoutMs: number;
  private readonly heapMb: number;
  private readonly idleMs: number;
  private readonly cacheEntries: number;
  private readonly maxWaiting: number;
  private readonly workerUrl: URL;
  /** WebP bytes, or null for a file that could not be rendered; insertion order is recency. */
  private readonly cache = new Map<string, Uint8Array | null>();
  private worker: Worker | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  private nextId = 0;
  private closed = false;
  /** Threads started so far (tests: a timed-out render ends its thread). */
  started = 0;

  constructor(opts: ThumbnailOptions = {}) {
    this.width = opts.width ?? 320;
    this.timeoutMs = opts.timeoutMs ?? 20_000;
    this.heapMb = opts.maxOldGenerationSizeMb ?? 256;
    this.idleMs = opts.idleMs ?? 30_000;
    this.cacheEntries = opts.cacheEntries ?? 256;
    this.maxWaiting = opts.maxWaiting ?? 16;
    this.workerUrl = opts.workerUrl ?? new URL('./thumbnail-worker.js', import.meta.url);
  }

  /**
   * The WebP image of page `page` (default the first) of the PDF with content hash `sha256` (its bytes come from
   * `read` when not cached), or null when it cannot be rendered (broken, hostile, too slow, or no such page).
   */
  async render(sha256: string, read: () => Promise<Uint8Array>, page = 1): Promise<Uint8Array | null> {
    const key = page === 1 ? sha256 : `${sha256}:${page}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.remember(key, cached);
      return cached;
    }
    if (this.closed) throw new AppError('service_unavailable', 'the server is shutting down');
    if (this.waiting >= this.maxWaiting) throw new AppError('service_unavailable', 'too many thumbnails are being drawn; try again in a moment');
    this.waiting++;
    const run = this.queue.then(async () => {
      this.waiting--;
      const again = this.cache.get(key); // drawn while this one waited
      if (again !== undefined) return again;
      const image = await this.draw(await read(), page);
      this.remember(key, image);
      return image;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private remember(key: string, value: Uint8Array | null): void {
    this.cache.delete(key);
    this.cache.set(key, value);
    while (this.cache.size > this.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
  }

  private thread(): Worker {
    clearTimeout(this.idleTimer);
    if (!this.worker) {
      this.started++;
      const worker = new Worker(this.workerUrl, { resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: 32 }, stdout: true, stderr: true });
      worker.stdout.resume();
      worker.stderr.resume();
      worker.unref();
      worker.once('exit', () => {
        if (this.worker === worker) this.worker = undefined;
      });
      this.worker = worker;
    }
    return this.worker;
  }

  private draw(data: Uint8Array, page: number): Promise<Uint8Array | null> {
    const worker = this.thread();
    const id = ++this.nextId;
    return new Promise<Uint8Array | null>((resolve) => {
      const done = (image: Uint8Array | null, keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onGone).off('exit', onGone);
        if (!keep) {
          if (this.worker === worker) this.worker = undefined;
          void worker.terminate();
        } else if (!this.closed) {
          this.idleTimer = setTimeout(() => void this.stopThread(), this.idleMs).unref();
        }
        resolve(image);
      };
      const onMessage = (reply: ThumbnailReply) => {
        if (reply.id === id) done(reply.ok ? reply.image : null, true);
      };
      const onGone = () => done(null, false);
      const timer = setTimeout(() => done(null, false), this.timeoutMs);
      worker.on('message', onMessage).once('error', onGone).once('exit', onGone);
      worker.postMessage({ id, data, width: this.width, maxHeight: this.width * 2, page } satisfies ThumbnailRequest);
    });
  }

  private async stopThread(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** Ends the thread; renders waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.stopThread();
  }
}
