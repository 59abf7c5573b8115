/**
 * One OCR worker thread (ocr-worker.ts) as the engine drives it: one page at a time, each with a time limit
 * after which the thread is ended (a fresh one takes the next page), a heap limit, and its console drained.
 */
import { Worker } from 'node:worker_threads';
import { seconds } from './duration.js';
import type { OcrPageReply, OcrPageRequest, OcrWorkerData } from './ocr-worker.js';

export class PageTimeout extends Error {
  override name = 'PageTimeout';
}

interface Pending {
  resolve(reply: OcrPageReply): void;
  reject(err: Error): void;
}

export class OcrThread {
  private readonly worker: Worker;
  private pending: Pending | undefined;
  private nextId = 0;
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
        void this.end();
      }, timeoutMs);
      this.pending = {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      this.worker.postMessage({ ...request, id: this.nextId++ } satisfies OcrPageRequest);
    });
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
