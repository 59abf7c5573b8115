/**
 * Parse stage: runs the parser for a document in its own worker thread with a time and memory limit, through a
 * bounded pool, so a hostile or broken file fails its own document and never the daemon. Every failure comes
 * back as a ParseError with a message meant for the person who uploaded the file.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ParseError } from './parsers/errors.js';
import type { WorkerInput, WorkerOutput } from './extract-worker.js';
import type { DocumentType, ParsedDocument, ParseOptions } from './types.js';

export interface ExtractorOptions {
  /** Wall-clock limit per document (default 60 000 ms). */
  timeoutMs?: number;
  /** V8 old-generation heap limit per worker in MB (default 512). */
  maxOldGenerationSizeMb?: number;
  /** Documents parsed at once (default: one per core minus one, at least 1). */
  concurrency?: number;
  /** Worker script; the default is extract-worker.js beside this module (in dist/). */
  workerUrl?: URL;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_OLD_GENERATION_MB = 512;

export const OUT_OF_MEMORY = 'the file could not be parsed (out of memory)';
const STOPPED = 'the file could not be parsed (the parser stopped without a result)';

export class Extractor {
  readonly timeoutMs: number;
  readonly maxOldGenerationSizeMb: number;
  readonly concurrency: number;
  private readonly workerUrl: URL;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly workers = new Set<Worker>();
  private closed = false;

  constructor(options: ExtractorOptions = {}) {
    this.timeoutMs = positive(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.maxOldGenerationSizeMb = positive(options.maxOldGenerationSizeMb ?? DEFAULT_MAX_OLD_GENERATION_MB, 'maxOldGenerationSizeMb');
    this.concurrency = positive(options.concurrency ?? Math.max(1, availableParallelism() - 1), 'concurrency');
    this.workerUrl = options.workerUrl ?? new URL('./extract-worker.js', import.meta.url);
  }

  /** Parses `bytes` as `type`. Resolves with the document or rejects with a ParseError; never anything else. */
  async extract(bytes: Uint8Array, type: DocumentType, options: ParseOptions = {}): Promise<ParsedDocument> {
    if (this.closed) throw new Error('extractor is closed');
    await this.acquire();
    try {
      return await this.runWorker(bytes, type, options);
    } finally {
      this.release();
    }
  }

  /** Documents being parsed right now. */
  get active(): number {
    return this.running;
  }

  /** Stops running workers (their documents fail) and refuses new work. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.terminate()));
  }

  private acquire(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => resolve()));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private runWorker(bytes: Uint8Array, type: DocumentType, options: ParseOptions): Promise<ParsedDocument> {
    // The worker gets its own copy, transferred rather than cloned, so the caller's buffer stays usable.
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    const input: WorkerInput = { type, bytes: copy, options };

    return new Promise((resolve, reject) => {
      let settled = false;
      const worker = new Worker(this.workerUrl, {
        workerData: input,
        transferList: [copy.buffer],
        resourceLimits: { maxOldGenerationSizeMb: this.maxOldGenerationSizeMb, maxYoungGenerationSizeMb: 64 },
        stdout: true,
        stderr: true,
      });
      this.workers.add(worker);
      // Whatever a parser prints is noise; drain it so it neither reaches the daemon's log nor piles up.
      worker.stdout.resume();
      worker.stderr.resume();

      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.workers.delete(worker);
        void worker.terminate();
        outcome();
      };
      const timer = setTimeout(() => {
        const seconds = Math.round(this.timeoutMs / 1000);
        finish(() => reject(new ParseError(`parsing took longer than ${seconds} s — gave up`)));
      }, this.timeoutMs);

      worker.on('message', (out: WorkerOutput) => {
        if (out.ok) finish(() => resolve(out.doc));
        else if (out.parseError) finish(() => reject(new ParseError(out.message)));
        else finish(() => reject(new ParseError(`the file could not be parsed (${short(out.message)})`)));
      });
      worker.on('error', (err: Error & { code?: string }) => {
        if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') finish(() => reject(new ParseError(OUT_OF_MEMORY, { cause: err })));
        else finish(() => reject(new ParseError(`the file could not be parsed (${short(err.message)})`, { cause: err })));
      });
      worker.on('exit', (code) => {
        if (this.closed) finish(() => reject(new ParseError('parsing was stopped (the service is shutting down)')));
        // 13: the parser's promise never settled and the worker ran out of work.
        else finish(() => reject(new ParseError(code === 1 ? OUT_OF_MEMORY : STOPPED)));
      });
    });
  }
}

export function createExtractor(options: ExtractorOptions = {}): Extractor {
  return new Extractor(options);
}

function short(message: string): string {
  return message.replace(/^(Error:\s*)+/, '').split('\n')[0]!.slice(0, 120) || 'unknown error';
}

function positive(value: number, label: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`"${label}" must be a positive number`);
  return value;
}
