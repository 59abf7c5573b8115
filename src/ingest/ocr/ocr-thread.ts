/**
 * One OCR worker thread (ocr-worker.ts) as the engine drives it: one page at a time, each with a time limit
 * after which the thread is ended (a fresh one takes the next page), a heap limit, and its console drained.
 * A PDF page's drawing has a budget of its own within that limit, sized by the page's image: counted in the
 * thread's processor time (Linux; wall time elsewhere) plus the time it waits on files, not the time it waits for a
 * core, so a busy machine does not cut a normal page while a hostile one (a page of millions of nested drawings)
 * gives up its lane and memory in seconds rather than at the page's limit. However loaded the machine, a drawing
 * ends after DRAW_WALL_FACTOR times its budget in wall time (the garbage collector's own threads, working hard when
 * a drawing nears the heap limit, are not counted in the thread's processor time).
 */
import { Worker } from 'node:worker_threads';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { threadCpuMs } from '../../core/thread-cpu.js';
import { seconds } from './duration.js';
import type { OcrPageReply, OcrPageRequest, OcrThreadNote, OcrWorkerData } from './ocr-worker.js';

/** Normal pages draw in a fraction of their budget: at load 8 on 2 cores a 300-dpi page took at most 0.3 s of its 6.2 s. */
export const DRAW_WALL_FACTOR = 4;

export class PageTimeout extends Error {
  override name = 'PageTimeout';
}

/** The page's drawing ran over its budget (a kind of time-out: it counts toward the pages in a row that did). */
export class DrawTimeout extends PageTimeout {
  override name = 'DrawTimeout';
}

interface Pending {
  id: number;
  resolve(reply: OcrPageReply): void;
  reject(err: Error): void;
  /** Told of the page's drawing: starting (with its image's pixels) or done. */
  note(note: { drawing: number } | { drawn: true }): void;
}

export class OcrThread {
  private readonly worker: Worker;
  private pending: Pending | undefined;
  private nextId = 0;
  /** Whether the page in hand is being drawn (a thread dying of its heap limit then names the drawing). */
  private drawing = false;
  /** Its thread id once it said it (Linux), so its processor time can be read. */
  private tid: number | undefined;
  dead = false;

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
    this.worker.on('message', (msg: OcrPageReply | OcrThreadNote) => {
      if ('thread' in msg) {
        this.tid = msg.thread;
        return;
      }
      const p = this.pending;
      if (!p || msg.id !== p.id) return; // a late word on a page already given up on
      if ('drawing' in msg || 'drawn' in msg) return p.note(msg);
      this.pending = undefined;
      p.resolve(msg);
    });
    this.worker.on('error', (err: Error & { code?: string }) =>
      gone(
        err.code !== 'ERR_WORKER_OUT_OF_MEMORY'
          ? new Error(err.message)
          : new Error(this.drawing ? `drawing the page ran out of memory (the OCR thread's limit of ${heapMb} MB): skipped` : 'out of memory'),
      ),
    );
    this.worker.on('exit', () => gone(new Error('the OCR thread stopped')));
  }

  /**
   * Runs one page within `timeoutMs` (wall time); its drawing, from when the thread has the page until the image
   * is made, within `drawBudgetMs(pixels)` of the thread's processor and waiting time.
   */
  run(request: Omit<OcrPageRequest, 'id'>, timeoutMs: number, drawBudgetMs: (pixels: number) => number): Promise<OcrPageReply> {
    return new Promise<OcrPageReply>((resolve, reject) => {
      const id = this.nextId++;
      let drawTimer: NodeJS.Timeout | undefined;
      const clear = () => {
        clearTimeout(timer);
        clearTimeout(drawTimer);
        this.drawing = false;
      };
      const giveUp = (err: Error) => {
        clear();
        this.pending = undefined;
        reject(err);
        void this.end();
      };
      const timer = setTimeout(() => giveUp(new PageTimeout(`took longer than ${seconds(timeoutMs)}`)), timeoutMs);
      this.pending = {
        id,
        resolve: (r) => (clear(), resolve(r)),
        reject: (e) => (clear(), reject(e)),
        note: (note) => {
          clearTimeout(drawTimer);
          this.drawing = 'drawing' in note;
          if (!('drawing' in note)) return;
          const budget = drawBudgetMs(note.drawing);
          const start = this.clock();
          const check = () => {
            const spent = this.spentSince(start);
            const wall = performance.now() - start.wall;
            if (spent < budget && wall < budget * DRAW_WALL_FACTOR) drawTimer = setTimeout(check, Math.max(100, Math.min(budget - spent, budget * DRAW_WALL_FACTOR - wall)));
            else giveUp(new DrawTimeout(`drawing the page took longer than its budget of ${seconds(budget)}: skipped`));
          };
          drawTimer = setTimeout(check, budget);
        },
      };
      this.worker.postMessage({ ...request, id } satisfies OcrPageRequest);
    });
  }

  private clock(): { wall: number; cpu: number | undefined; elu: EventLoopUtilization } {
    return { wall: performance.now(), cpu: threadCpuMs(this.tid), elu: this.worker.performance.eventLoopUtilization() };
  }

  /** Processor time plus the time its event loop waited (on files), or wall time where the former is unknown. */
  private spentSince(start: ReturnType<OcrThread['clock']>): number {
    const cpu = threadCpuMs(this.tid);
    if (cpu === undefined || start.cpu === undefined) return performance.now() - start.wall;
    return cpu - start.cpu + this.worker.performance.eventLoopUtilization(start.elu).idle;
  }

  /** Ends the thread; a page it is working on fails. */
  async end(): Promise<void> {
    const p = this.pending;
    this.pending = undefined;
    this.dead = true;
    p?.reject(new Error('the OCR thread was ended'));
    await this.worker.terminate();
  }
}
