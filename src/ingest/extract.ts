/**
 * Parse stage: runs parsers in worker threads with a time and memory limit, through a bounded pool, so a
 * hostile or broken file fails its own document and never the daemon. Every failure comes back as a
 * ParseError with a message meant for the person who uploaded the file.
 *
 * Workers are reused: a worker loads each parser library (mammoth, the PDF stack) with its first document of that
 * type, which cost more CPU per document than embedding a short text when each document had its own worker
 * (bench/results/ingest.md). A worker
 * that timed out, ran out of memory or crashed is discarded (never reused); a healthy one goes back to the
 * pool, is retired after `maxDocumentsPerWorker` documents (a parser's leaks stay bounded) and exits after
 * `idleMs` without work.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { cutChars } from '../core/code-points.js';
import { threadCpuMs } from '../core/thread-cpu.js';
import { convertLegacy, legacyRefusal, type LibreOffice } from './office/libreoffice.js';
import { ParseError } from './parsers/errors.js';
import type { WorkerInput, WorkerOutput } from './extract-worker.js';
import { CONVERTED_TO, isLegacyOffice, type DocumentType, type ParsedDocument, type ParseOptions, type ParsedType } from './types.js';

export interface ExtractorOptions {
  /**
   * Time limit per document (default 60 000 ms): the time its parse works or waits, not the time it waits for a core
   * on a busy machine (where the system tells a thread's processor time; wall time elsewhere), and at most
   * `WALL_FACTOR` times as long in wall time.
   */
  timeoutMs?: number;
  /** V8 old-generation heap limit per worker in MB (default 512). */
  maxOldGenerationSizeMb?: number;
  /** Documents parsed at once (default: one per core minus one, at least 2, so one slow file never holds every parser). */
  concurrency?: number;
  /** Worker script; the default is extract-worker.js beside this module (in dist/). */
  workerUrl?: URL;
  /** Documents one worker parses before it is replaced (default 200). */
  maxDocumentsPerWorker?: number;
  /** An idle worker exits after this long (default 30 000 ms). */
  idleMs?: number;
  /** Converts legacy .doc, .xls and .ppt before they are parsed; without it they fail with what to install. */
  libreOffice?: LibreOffice;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_OLD_GENERATION_MB = 512;
/** The most a legacy Office file may grow to in its modern format (the parsers' own limits then apply). */
const MAX_CONVERTED_BYTES = 256 * 1024 * 1024;

export const OUT_OF_MEMORY = 'the file could not be parsed (out of memory)';
const STOPPED = 'the file could not be parsed (the parser stopped without a result)';
/**
 * However loaded the machine, a parse ends after this many times its limit in wall time: a thread asleep in a
 * blocking call uses neither processor nor idle time. At load 20 on 2 cores a thread gets a tenth of a core.
 */
export const WALL_FACTOR = 10;

interface PooledWorker {
  worker: Worker;
  documents: number;
  /** Its thread id, once the worker has said it (Linux): its processor time is then counted, not wall time. */
  thread?: number;
  idleTimer?: NodeJS.Timeout;
  /** Settles the document in progress, if any (set while the worker parses). */
  settle?: (outcome: Exclude<WorkerOutput, { thread: number }> | { failure: ParseError }) => void;
}

export class Extractor {
  readonly timeoutMs: number;
  readonly maxOldGenerationSizeMb: number;
  readonly concurrency: number;
  private readonly workerUrl: URL;
  private readonly maxDocumentsPerWorker: number;
  private readonly idleMs: number;
  private readonly libreOffice: LibreOffice | undefined;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly workers = new Set<PooledWorker>();
  private readonly idle: PooledWorker[] = [];
  private nextId = 0;
  private closed = false;
  /** Workers started so far (for tests and the bench: reuse means far fewer than documents). */
  started = 0;

  constructor(options: ExtractorOptions = {}) {
    this.timeoutMs = positive(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.maxOldGenerationSizeMb = positive(options.maxOldGenerationSizeMb ?? DEFAULT_MAX_OLD_GENERATION_MB, 'maxOldGenerationSizeMb');
    this.concurrency = positive(options.concurrency ?? Math.max(2, availableParallelism() - 1), 'concurrency');
    this.workerUrl = options.workerUrl ?? new URL('./extract-worker.js', import.meta.url);
    this.maxDocumentsPerWorker = positive(options.maxDocumentsPerWorker ?? 200, 'maxDocumentsPerWorker');
    this.idleMs = positive(options.idleMs ?? 30_000, 'idleMs');
    this.libreOffice = options.libreOffice;
  }

  /**
   * Parses `bytes` as `type` (a legacy Office file after LibreOffice converted it, with the same time limit).
   * Resolves with the document or rejects with a ParseError; never anything else.
   */
  async extract(bytes: Uint8Array, type: DocumentType, options: ParseOptions = {}): Promise<ParsedDocument> {
    if (this.closed) throw new Error('extractor is closed');
    await this.acquire();
    try {
      if (!isLegacyOffice(type)) return await this.parse(bytes, type, options);
      if (!this.libreOffice) throw new ParseError(`the file is ${legacyRefusal(type, false)}`);
      const converted = await convertLegacy(this.libreOffice, bytes, type, { timeoutMs: this.timeoutMs, maxOutputBytes: MAX_CONVERTED_BYTES });
      return await this.parse(converted, CONVERTED_TO[type], options);
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
    await Promise.all([...this.workers].map((w) => this.discard(w)));
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

  private spawn(): PooledWorker {
    const worker = new Worker(this.workerUrl, {
      resourceLimits: { maxOldGenerationSizeMb: this.maxOldGenerationSizeMb, maxYoungGenerationSizeMb: 64 },
      stdout: true,
      stderr: true,
    });
    this.started++;
    const pooled: PooledWorker = { worker, documents: 0 };
    this.workers.add(pooled);
    // Whatever a parser prints is noise; drain it so it neither reaches the daemon's log nor piles up.
    worker.stdout.resume();
    worker.stderr.resume();
    worker.on('message', (out: WorkerOutput) => {
      if ('thread' in out) pooled.thread = out.thread;
      else pooled.settle?.(out);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const failure =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ParseError(OUT_OF_MEMORY, { cause: err })
          : new ParseError(`the file could not be parsed (${short(err.message)})`, { cause: err });
      pooled.settle?.({ failure });
      void this.discard(pooled);
    });
    worker.on('exit', (code) => {
      const message = this.closed ? 'parsing was stopped (the service is shutting down)' : code === 1 ? OUT_OF_MEMORY : STOPPED;
      // 13: the parser's promise never settled and the worker ran dry.
      pooled.settle?.({ failure: new ParseError(message) });
      void this.discard(pooled);
    });
    return pooled;
  }

  private take(): PooledWorker {
    const pooled = this.idle.pop() ?? this.spawn();
    clearTimeout(pooled.idleTimer);
    pooled.worker.ref();
    return pooled;
  }

  private giveBack(pooled: PooledWorker): void {
    if (this.closed || pooled.documents >= this.maxDocumentsPerWorker) {
      void this.discard(pooled);
      return;
    }
    pooled.worker.unref(); // an idle parser never keeps the process alive
    pooled.idleTimer = setTimeout(() => {
      this.idle.splice(this.idle.indexOf(pooled), 1);
      void this.discard(pooled);
    }, this.idleMs);
    pooled.idleTimer.unref();
    this.idle.push(pooled);
  }

  private async discard(pooled: PooledWorker): Promise<void> {
    clearTimeout(pooled.idleTimer);
    const at = this.idle.indexOf(pooled);
    if (at >= 0) this.idle.splice(at, 1);
    if (!this.workers.delete(pooled)) return;
    await pooled.worker.terminate();
  }

  private parse(bytes: Uint8Array, type: ParsedType, options: ParseOptions): Promise<ParsedDocument> {
    // The worker gets its own copy, transferred rather than cloned, so the caller's buffer stays usable.
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    const input: WorkerInput = { id: this.nextId++, type, bytes: copy, options };
    const pooled = this.take();
    pooled.documents++;

    return new Promise((resolve, reject) => {
      // A fresh worker has not said its thread yet: its processor and idle time are then counted from its start.
      const start = { wall: Date.now(), cpu: threadCpuMs(pooled.thread) ?? 0, elu: pooled.thread === undefined ? undefined : pooled.worker.performance.eventLoopUtilization() };
      const check = (): void => {
        const wall = Date.now() - start.wall;
        const cpu = threadCpuMs(pooled.thread);
        const spent = cpu === undefined ? wall : cpu - start.cpu + pooled.worker.performance.eventLoopUtilization(start.elu).idle;
        if (spent < this.timeoutMs && wall < this.timeoutMs * WALL_FACTOR) {
          timer = setTimeout(check, Math.max(100, this.timeoutMs - spent));
          return;
        }
        const seconds = Math.round(this.timeoutMs / 1000);
        pooled.settle?.({ failure: new ParseError(`parsing took longer than ${seconds} s — gave up`) });
        void this.discard(pooled);
      };
      let timer = setTimeout(check, this.timeoutMs);
      pooled.settle = (out) => {
        if ('id' in out && out.id !== input.id) return; // a late answer to a document already given up on
        pooled.settle = undefined;
        clearTimeout(timer);
        if ('failure' in out) return reject(out.failure);
        if (out.ok) {
          this.giveBack(pooled);
          return resolve(out.doc);
        }
        if (out.parseError) {
          this.giveBack(pooled); // the parser refused the file cleanly
          return reject(new ParseError(out.message));
        }
        // A parser that crashed may have left its library in a bad state: this worker is not reused.
        void this.discard(pooled);
        reject(new ParseError(`the file could not be parsed (${short(out.message)})`));
      };
      pooled.worker.postMessage(input, [copy.buffer]);
    });
  }
}

export function createExtractor(options: ExtractorOptions = {}): Extractor {
  return new Extractor(options);
}

function short(message: string): string {
  return cutChars(message.replace(/^(Error:\s*)+/, '').split('\n')[0]!, 120) || 'unknown error';
}

function positive(value: number, label: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`"${label}" must be a positive number`);
  return value;
}
