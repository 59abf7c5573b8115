/**
 * OCR of PDF pages in worker threads (ocr-worker.ts), shared by every document being ingested:
 *
 * - at most `concurrency` threads (default: one per core minus one), each with a heap limit, each keeping its
 *   Tesseract instance loaded between pages and going away after `idleMs` without work;
 * - a page gets `pageTimeoutMs`; a page that takes longer ends its thread (a fresh one takes the next page),
 *   so one hung page cannot hold a thread; after `maxTimeouts` pages in a row time out, the document's other
 *   pages are given up (a file whose every page hangs);
 * - a document gets `budgetMs(pages)`: a base plus a share per page, so a 40-page scan finishes while a
 *   document of slow pages still ends.
 *
 * Limits are wall-clock and generous: a page costs ~2–4 s of CPU, and a shared machine can stretch that
 * several times over.
 *
 * A page that fails is reported with a reason; the document's other pages go on.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { OcrLanguages } from './languages.js';
import type { OcrPageReply, OcrPageRequest, OcrWorkerData } from './ocr-worker.js';
import { DEFAULT_DPI } from './render.js';

export interface OcrEngineOptions {
  /** Disposed by close(). */
  languages: OcrLanguages;
  /** Threads recognising at once (default: one per core minus one, at least 1). */
  concurrency?: number;
  /** Longest time for one page, render and recognition (default 120 000 ms). */
  pageTimeoutMs?: number;
  /** Pages in a row that may time out before the rest of the document is given up (default 3). */
  maxTimeouts?: number;
  /** A document's whole budget is `baseBudgetMs + pages × pageBudgetMs` (defaults 120 000 and 30 000 ms). */
  baseBudgetMs?: number;
  pageBudgetMs?: number;
  /** V8 old-generation heap limit per thread in MB (default 512); Tesseract's wasm memory is its own. */
  maxOldGenerationSizeMb?: number;
  /** An idle thread is ended after this long (default 30 000 ms), releasing Tesseract's memory. */
  idleMs?: number;
  dpi?: number;
  /** Worker script; the default is ocr-worker.js beside this module (in dist/). */
  workerUrl?: URL;
}

export interface OcrPage {
  page: number;
  text: string;
  /** Tesseract's mean word confidence, 0–100. */
  confidence: number;
  renderMs: number;
  recognizeMs: number;
}

export interface OcrFailure {
  page: number;
  reason: string;
  /** The page ran out of time (rather than failing). */
  timedOut?: boolean;
}

export interface OcrRun {
  pages: OcrPage[];
  failed: OcrFailure[];
}

export interface RecognizeOptions {
  /** Called after each page (done of total). A rejection stops the run: pages not started are dropped. */
  onPage?: (done: number, total: number) => Promise<void> | void;
}

export const DEFAULT_PAGE_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_TIMEOUTS = 3;
export const DEFAULT_BASE_BUDGET_MS = 120_000;
export const DEFAULT_PAGE_BUDGET_MS = 30_000;

class PageTimeout extends Error {
  override name = 'PageTimeout';
}

interface Pending {
  resolve(reply: OcrPageReply): void;
  reject(err: Error): void;
}

/** One worker thread and the page it is working on. */
class OcrThread {
  readonly worker: Worker;
  private pending: Pending | undefined;
  private nextId = 0;
  dead = false;
  idleTimer: NodeJS.Timeout | undefined;

  constructor(url: URL, data: OcrWorkerData, heapMb: number, onGone: (t: OcrThread) => void) {
    this.worker = new Worker(url, {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 64 },
      stdout: true,
      stderr: true,
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.worker.unref();
    const gone = (err: Error) => {
      if (this.dead) return;
      this.dead = true;
      this.pending?.reject(err);
      this.pending = undefined;
      onGone(this);
    };
    this.worker.on('message', (reply: OcrPageReply) => {
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(reply);
    });
    this.worker.on('error', (err: Error & { code?: string }) =>
      gone(new Error(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'out of memory' : err.message)),
    );
    this.worker.on('exit', () => gone(new Error('the OCR thread stopped')));
  }

  run(request: Omit<OcrPageRequest, 'id'>, timeoutMs: number): Promise<OcrPageReply> {
    return new Promise<OcrPageReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        reject(new PageTimeout(`took longer than ${seconds(timeoutMs)}`));
        this.end();
      }, timeoutMs);
      this.pending = {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      this.worker.postMessage({ ...request, id: this.nextId++ } satisfies OcrPageRequest);
    });
  }

  end(): void {
    clearTimeout(this.idleTimer);
    this.dead = true;
    void this.worker.terminate();
  }
}

export class OcrEngine {
  readonly languages: string;
  readonly concurrency: number;
  readonly pageTimeoutMs: number;
  private readonly maxTimeouts: number;
  private readonly data: OcrWorkerData;
  private readonly disposeLanguages: () => void;
  private readonly baseBudgetMs: number;
  private readonly pageBudgetMs: number;
  private readonly heapMb: number;
  private readonly idleMs: number;
  private readonly workerUrl: URL;
  private readonly idle: OcrThread[] = [];
  private readonly all = new Set<OcrThread>();
  /** Pages waiting for a thread; called with none when the engine closes. */
  private readonly waiting: ((t: OcrThread | undefined) => void)[] = [];
  private closed = false;

  constructor(options: OcrEngineOptions) {
    this.languages = options.languages.code;
    this.concurrency = positive(options.concurrency ?? Math.max(1, availableParallelism() - 1), 'concurrency');
    this.pageTimeoutMs = positive(options.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS, 'pageTimeoutMs');
    this.maxTimeouts = positive(options.maxTimeouts ?? DEFAULT_MAX_TIMEOUTS, 'maxTimeouts');
    this.baseBudgetMs = positive(options.baseBudgetMs ?? DEFAULT_BASE_BUDGET_MS, 'baseBudgetMs');
    this.pageBudgetMs = positive(options.pageBudgetMs ?? DEFAULT_PAGE_BUDGET_MS, 'pageBudgetMs');
    this.heapMb = positive(options.maxOldGenerationSizeMb ?? 512, 'maxOldGenerationSizeMb');
    this.idleMs = positive(options.idleMs ?? 30_000, 'idleMs');
    this.workerUrl = options.workerUrl ?? new URL('./ocr-worker.js', import.meta.url);
    this.disposeLanguages = () => options.languages.dispose();
    this.data = { languages: options.languages.code, langPath: options.languages.langPath, dpi: options.dpi ?? DEFAULT_DPI };
  }

  /** The most time a document of `pages` OCR'd pages may take. */
  budgetMs(pages: number): number {
    return this.baseBudgetMs + pages * this.pageBudgetMs;
  }

  /** Recognises `pages` (1-based) of the PDF in `bytes`; pages come back in page order. */
  async recognize(bytes: Uint8Array, pages: number[], options: RecognizeOptions = {}): Promise<OcrRun> {
    if (this.closed) throw new Error('the OCR engine is closed');
    const order = [...new Set(pages)].sort((a, b) => a - b);
    const data = new SharedArrayBuffer(bytes.byteLength);
    new Uint8Array(data).set(bytes);
    const key = randomBytes(8).toString('hex');
    const deadline = performance.now() + this.budgetMs(order.length);
    const done: OcrPage[] = [];
    const failed: OcrFailure[] = [];
    let next = 0;
    let finished = 0;
    let stop: unknown;
    let timeoutsInRow = 0;

    const lane = async (): Promise<void> => {
      while (next < order.length && stop === undefined && !this.closed) {
        const page = order[next++]!;
        const left = deadline - performance.now();
        if (left <= 0) {
          failed.push({ page, reason: `the document's OCR time budget (${seconds(this.budgetMs(order.length))}) ran out` });
        } else if (timeoutsInRow >= this.maxTimeouts) {
          failed.push({ page, reason: `skipped after ${timeoutsInRow} pages in a row took too long` });
        } else {
          const outcome = await this.page({ key, data, page }, Math.min(this.pageTimeoutMs, left));
          if ('reason' in outcome) failed.push(outcome);
          else done.push(outcome);
          timeoutsInRow = 'reason' in outcome && outcome.timedOut ? timeoutsInRow + 1 : 0;
        }
        finished++;
        try {
          await options.onPage?.(finished, order.length);
        } catch (err) {
          stop ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, order.length) }, lane));
    if (stop !== undefined) throw stop;
    // Pages cut short by a shutdown are not failures of the document: its job is retried at the next start.
    if (this.closed) throw new Error('OCR was stopped (the service is shutting down)');
    done.sort((a, b) => a.page - b.page);
    failed.sort((a, b) => a.page - b.page);
    return { pages: done, failed };
  }

  /** Threads alive now (busy or idle). */
  get threads(): number {
    return this.all.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter(undefined);
    const threads = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(threads.map((t) => (clearTimeout(t.idleTimer), t.worker.terminate())));
    this.disposeLanguages();
  }

  private async page(request: Omit<OcrPageRequest, 'id'>, timeoutMs: number): Promise<OcrPage | OcrFailure> {
    let thread: OcrThread;
    try {
      thread = await this.acquire();
    } catch (err) {
      return { page: request.page, reason: short((err as Error).message) };
    }
    try {
      const reply = await thread.run(request, timeoutMs);
      if (!reply.ok) return { page: request.page, reason: short(reply.message) };
      const { text, confidence, renderMs, recognizeMs } = reply;
      return { page: request.page, text, confidence, renderMs, recognizeMs };
    } catch (err) {
      return { page: request.page, reason: short((err as Error).message), ...(err instanceof PageTimeout ? { timedOut: true } : {}) };
    } finally {
      this.release(thread);
    }
  }

  private acquire(): Promise<OcrThread> {
    if (this.closed) return Promise.reject(new Error('the OCR engine is closed'));
    const ready = this.idle.pop();
    if (ready) {
      clearTimeout(ready.idleTimer);
      return Promise.resolve(ready);
    }
    if (this.all.size < this.concurrency) return Promise.resolve(this.spawn());
    return new Promise((resolve, reject) => this.waiting.push((t) => (t ? resolve(t) : reject(new Error('the OCR engine is closed')))));
  }

  private spawn(): OcrThread {
    const thread = new OcrThread(this.workerUrl, this.data, this.heapMb, (t) => this.forget(t));
    this.all.add(thread);
    return thread;
  }

  private release(thread: OcrThread): void {
    if (this.closed) return;
    const waiter = this.waiting.shift();
    if (thread.dead) {
      // It timed out or crashed and was ended: whoever waits gets a fresh one.
      this.forget(thread);
      waiter?.(this.spawn());
      return;
    }
    if (waiter) {
      waiter(thread);
      return;
    }
    thread.idleTimer = setTimeout(() => {
      this.forget(thread);
      thread.end();
    }, this.idleMs);
    thread.idleTimer.unref();
    this.idle.push(thread);
  }

  private forget(thread: OcrThread): void {
    this.all.delete(thread);
    const i = this.idle.indexOf(thread);
    if (i >= 0) this.idle.splice(i, 1);
  }
}

const seconds = (ms: number): string => `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;

function short(message: string): string {
  return message.replace(/^(Error:\s*)+/, '').split('\n')[0]!.slice(0, 120) || 'unknown error';
}

function positive(value: number, label: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`"${label}" must be a positive number`);
  return value;
}
