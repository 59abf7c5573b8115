/**
 * OCR of PDF pages, shared by every document being ingested:
 *
 * - pages are read in parallel, at most `concurrency` at once (default: one per core; the embedder waits on OCR
 *   for a scanned document anyway), each in a worker thread (ocr-worker.ts) that makes the page's image and a
 *   blank page ends there;
 * - the image is recognised by native Tesseract when it is installed and works (native.ts; a long-lived process
 *   per thread reads its pages, native-session.ts), else by tesseract.js in the same thread. A native page that
 *   fails is read again by tesseract.js, and after `NATIVE_FAILURES` such pages in a row the engine stays with
 *   tesseract.js until it is released;
 * - threads and processes run at a lower CPU priority, and each page first waits (briefly) for searches in
 *   flight (`background`), so OCR takes the cores only when searches do not need them;
 * - nothing is loaded until the first page: the probe of native Tesseract, the folders of trained data, the
 *   threads and processes. After `idleMs` without pages all of it is released (threads and processes ended,
 *   folders removed) and the next page loads it again;
 * - a page gets `pageTimeoutMs`; a page that takes longer ends its thread or process, so one hung page cannot
 *   hold a lane. Within it, drawing a PDF page gets `drawBudgetMs(pixels)` of its thread's processor time, a base
 *   plus a share per megapixel of the page's image: a normal page draws in well under a second
 *   (docs/ingest.md#ocr-of-scanned-pages), a hostile one (2^24 nested form XObjects) would draw until the page's
 *   limit, holding a lane and growing the thread's memory all along. After `maxTimeouts` pages in a row time out,
 *   the document's other pages are given up (a file whose every page hangs);
 * - a document gets `budgetMs(pages)`: a base plus a share per page, so a 40-page scan finishes while a
 *   document of slow pages still ends.
 *
 * Limits are wall-clock and generous: a dense A4 page costs seconds of CPU (docs/BENCHMARKS.md#ocr),
 * and a shared machine can stretch that several times over.
 *
 * A page that fails is reported with a reason; the document's other pages go on.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { cutChars } from '../../core/code-points.js';
import type { Yielder } from '../../core/foreground.js';
import { seconds } from './duration.js';
import { installedOcrCodes, installedOcrLanguages, stageForNative, stageForTesseractJs, type OcrLanguages, type StagedData, type SystemTessdata } from './languages.js';
import { ToolTimeout } from '../run-tool.js';
import { probeTesseract, recognizeNative, type NativeTesseract } from './native.js';
import { TesseractSession } from './native-session.js';
import { OcrThread, PageTimeout } from './ocr-thread.js';
import type { OcrPageReply, OcrPageRequest } from './ocr-worker.js';

/** Which Tesseract reads: native when installed and working (else tesseract.js), or one of them only. */
export const OCR_ENGINES = ['auto', 'native', 'tesseract.js'] as const;
export type OcrEngineChoice = (typeof OCR_ENGINES)[number];

export interface OcrEngineOptions {
  languages: OcrLanguages;
  /** Default 'auto'. 'native' without a working native Tesseract fails every page, saying why. */
  engine?: OcrEngineChoice;
  /** The native Tesseract program (default `tesseract`, found on the PATH). */
  tesseractPath?: string;
  /** Pages recognised at once (default: one per core). */
  concurrency?: number;
  /** Longest time for one page, image and recognition (default 120 000 ms). */
  pageTimeoutMs?: number;
  /** Pages in a row that may time out before the rest of the document is given up (default 3). */
  maxTimeouts?: number;
  /**
   * Drawing a PDF page's image may take `drawBaseMs + megapixels × drawMsPerMegapixel` of its thread's processor
   * time (defaults 2 000 and 500 ms: 6.2 s for a Letter page at 300 dpi, 20 times what a dense one took at load 8).
   */
  drawBaseMs?: number;
  drawMsPerMegapixel?: number;
  /** A document's whole budget is `baseBudgetMs + pages × pageBudgetMs` (defaults 120 000 and 30 000 ms). */
  baseBudgetMs?: number;
  pageBudgetMs?: number;
  /**
   * V8 old-generation heap limit per thread in MB (default 256); Tesseract's wasm memory is its own. A normal
   * page's drawing needs little heap (its images are buffers outside it); a hostile page's operator list grows until
   * its drawing budget or this limit ends it, and with 512 MB the daemon reached 1 GB.
   */
  maxOldGenerationSizeMb?: number;
  /** Everything loaded for OCR is released after this long without a page (default 30 000 ms). */
  idleMs?: number;
  /** Resolution pages are rendered at when they are not a scan of 200–600 dpi (default 300). */
  dpi?: number;
  /** Worker script; the default is ocr-worker.js beside this module (in dist/). */
  workerUrl?: URL;
  /** Searches in flight: each page waits for a gap between them (bounded) before it starts. */
  background?: Yielder;
  /** Told when the engine loads (which Tesseract, and why not native when it is not) and when it is released. */
  onState?: (state: OcrEngineState) => void;
}

export type OcrEngineState =
  | { event: 'loaded'; engine: string; nativeUnusable?: string }
  | { event: 'fallback'; engine: string; reason: string }
  | { event: 'released' };

export interface OcrPage {
  page: number;
  text: string;
  /** Tesseract's mean word confidence, 0–100 (0 for a blank page). */
  confidence: number;
  /** The page was blank: nothing was recognised. */
  blank?: true;
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
  /** Which Tesseract read the pages, e.g. "tesseract 5.3.0" or "tesseract.js". */
  engine: string;
}

export interface RecognizeOptions {
  /** Called after each page (done of total). A rejection stops the run: pages not started are dropped. */
  onPage?: (done: number, total: number) => Promise<void> | void;
  /** The languages this document's pages are read in (its upload's or project's setting); default the engine's. */
  languages?: OcrLanguages;
}

export const DEFAULT_PAGE_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_TIMEOUTS = 3;
export const DEFAULT_BASE_BUDGET_MS = 120_000;
export const DEFAULT_PAGE_BUDGET_MS = 30_000;
export const DEFAULT_HEAP_MB = 256;
export const DEFAULT_DRAW_BASE_MS = 2_000;
export const DEFAULT_DRAW_MS_PER_MEGAPIXEL = 500;
/** Native pages failing in a row before the engine stays with tesseract.js (until it is released). */
export const NATIVE_FAILURES = 3;
/** Pages one native Tesseract process reads before a fresh one takes over (whatever it may leak stays bounded). */
const SESSION_PAGES = 100;
const TESSERACT_JS = 'tesseract.js';

/** What is loaded while the engine is in use. */
interface Loaded {
  /** Native Tesseract, and its folder of trained data per language code (the engine's own laid out at load). */
  native?: { tesseract: NativeTesseract; data: Map<string, StagedData> };
  /** tesseract.js's folder of trained data per language code, each made when tesseract.js first needs it. */
  wasm: Map<string, StagedData>;
  nativeFailuresInRow: number;
  /** Why native Tesseract is not used (set from the start, or after it failed). */
  nativeUnusable?: string;
}

/** A tiny white image: the probe's recognition, which loads the trained data as a page would. */
const PROBE_IMAGE = Buffer.concat([Buffer.from('P4\n8 8\n', 'ascii'), Buffer.alloc(8)]);

export class OcrEngine {
  readonly languages: string;
  readonly concurrency: number;
  readonly pageTimeoutMs: number;
  private readonly options: OcrEngineOptions;
  private readonly choice: OcrEngineChoice;
  private readonly maxTimeouts: number;
  private readonly baseBudgetMs: number;
  private readonly pageBudgetMs: number;
  private readonly drawBaseMs: number;
  private readonly drawMsPerMegapixel: number;
  private readonly heapMb: number;
  private readonly idleMs: number;
  private readonly dpi: number;
  private readonly workerUrl: URL;
  private readonly idle: OcrThread[] = [];
  private readonly all = new Set<OcrThread>();
  /** Each thread's native Tesseract process, kept while the engine is loaded. */
  private readonly sessions = new Map<OcrThread, TesseractSession>();
  /** Pages waiting for a thread; called with none when the engine closes. */
  private readonly waiting: ((t: OcrThread | undefined) => void)[] = [];
  private loading: Promise<Loaded> | undefined;
  /** The system Tesseract's installed trained data (looked for when a document first names its languages). */
  private system: Promise<SystemTessdata | undefined> | undefined;
  private loaded: Loaded | undefined;
  private busy = 0;
  /** Releases under way (threads ending, folders being removed). */
  private releasing = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly stop = new AbortController();
  private closed = false;

  constructor(options: OcrEngineOptions) {
    this.options = options;
    this.languages = options.languages.code;
    this.choice = options.engine ?? 'auto';
    if (!OCR_ENGINES.includes(this.choice)) throw new TypeError(`"engine" must be one of ${OCR_ENGINES.join(', ')}`);
    this.concurrency = positive(options.concurrency ?? availableParallelism(), 'concurrency');
    this.pageTimeoutMs = positive(options.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS, 'pageTimeoutMs');
    this.maxTimeouts = positive(options.maxTimeouts ?? DEFAULT_MAX_TIMEOUTS, 'maxTimeouts');
    this.baseBudgetMs = positive(options.baseBudgetMs ?? DEFAULT_BASE_BUDGET_MS, 'baseBudgetMs');
    this.pageBudgetMs = positive(options.pageBudgetMs ?? DEFAULT_PAGE_BUDGET_MS, 'pageBudgetMs');
    this.drawBaseMs = positive(options.drawBaseMs ?? DEFAULT_DRAW_BASE_MS, 'drawBaseMs');
    this.drawMsPerMegapixel = positive(options.drawMsPerMegapixel ?? DEFAULT_DRAW_MS_PER_MEGAPIXEL, 'drawMsPerMegapixel');
    this.heapMb = positive(options.maxOldGenerationSizeMb ?? DEFAULT_HEAP_MB, 'maxOldGenerationSizeMb');
    this.idleMs = positive(options.idleMs ?? 30_000, 'idleMs');
    this.dpi = positive(options.dpi ?? 300, 'dpi');
    this.workerUrl = options.workerUrl ?? new URL('./ocr-worker.js', import.meta.url);
  }

  /** The most time a document of `pages` OCR'd pages may take. */
  budgetMs(pages: number): number {
    return this.baseBudgetMs + pages * this.pageBudgetMs;
  }

  /** The most processor time drawing a page whose image has `pixels` may take. */
  readonly drawBudgetMs = (pixels: number): number => this.drawBaseMs + (pixels / 1_000_000) * this.drawMsPerMegapixel;

  /** Threads alive now (busy or idle). */
  get threads(): number {
    return this.all.size;
  }

  /** Whether anything is loaded (from the first page until the release after `idleMs` without pages is done). */
  get isLoaded(): boolean {
    return this.loading !== undefined || this.releasing > 0;
  }

  /** Which Tesseract reads pages now: undefined until loaded. */
  get engine(): string | undefined {
    return this.loaded && this.current(this.loaded);
  }

  /**
   * The languages a document's setting ("deu+eng") asks for that are installed here, and those that are not; the
   * system Tesseract's data is looked for once.
   */
  async languagesFor(spec: string): Promise<{ languages?: OcrLanguages; missing: string[] }> {
    return installedOcrLanguages(spec, await this.systemData());
  }

  /** Every language installed here (what a project's setting may name without a warning). */
  async installedLanguages(): Promise<string[]> {
    return installedOcrCodes(await this.systemData());
  }

  private systemData(): Promise<SystemTessdata | undefined> {
    this.system ??= probeTesseract(this.options.tesseractPath ?? 'tesseract').then(
      (t) => t.system,
      () => undefined,
    );
    return this.system;
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
    const engines = new Set<string>();
    const languages = options.languages ?? this.options.languages;
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
          const outcome = await this.page({ key, data, page }, Math.min(this.pageTimeoutMs, left), engines, languages);
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
    return { pages: done, failed, engine: [...engines].join(', ') || (this.engine ?? '') };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    for (const waiter of this.waiting.splice(0)) waiter(undefined);
    await this.release();
  }

  private async page(request: Omit<OcrPageRequest, 'id'>, timeoutMs: number, engines: Set<string>, languages: OcrLanguages): Promise<OcrPage | OcrFailure> {
    const deadline = performance.now() + timeoutMs;
    const left = () => Math.max(1, deadline - performance.now());
    this.busy++;
    clearTimeout(this.idleTimer);
    let thread: OcrThread | undefined;
    try {
      await this.options.background?.yieldToForeground();
      const loaded = await this.load();
      const native = this.choice !== TESSERACT_JS && loaded.nativeUnusable === undefined ? loaded.native : undefined;
      if (!native && this.choice === 'native') return { page: request.page, reason: `native Tesseract is not usable: ${loaded.nativeUnusable}` };
      thread = await this.acquire();
      const reply = await thread.run({ ...request, ...(native ? {} : { recognize: this.wasm(loaded, languages) }) }, left(), this.drawBudgetMs);
      if (!reply.ok) return { page: request.page, reason: short(reply.message) };
      if (reply.blank) return { page: request.page, text: '', confidence: 0, blank: true, renderMs: reply.renderMs, recognizeMs: 0 };
      if ('text' in reply) {
        engines.add(TESSERACT_JS);
        return pageOf(request.page, reply);
      }
      if (!('image' in reply) || !native) return { page: request.page, reason: 'the OCR thread answered without a page image' };
      return await this.readNative(request, reply, { loaded, native, thread, left, engines, languages });
    } catch (err) {
      return { page: request.page, reason: short((err as Error).message), ...(err instanceof PageTimeout ? { timedOut: true } : {}) };
    } finally {
      if (thread) this.giveBack(thread);
      if (--this.busy === 0 && !this.closed) {
        this.idleTimer = setTimeout(() => void this.release(), this.idleMs);
        this.idleTimer.unref();
      }
    }
  }

  /**
   * Native Tesseract reads the page's image. A page it fails on (not one it runs out of time on) is read again by
   * tesseract.js in the same thread; after NATIVE_FAILURES in a row, `auto` stays with tesseract.js.
   */
  private async readNative(
    request: Omit<OcrPageRequest, 'id'>,
    reply: Extract<OcrPageReply, { image: Uint8Array }>,
    at: { loaded: Loaded; native: NonNullable<Loaded['native']>; thread: OcrThread; left: () => number; engines: Set<string>; languages: OcrLanguages },
  ): Promise<OcrPage | OcrFailure> {
    const { loaded, native, engines, languages } = at;
    const started = performance.now();
    try {
      let session = this.sessions.get(at.thread);
      if (!session || session.dead || session.dpi !== reply.dpi || session.languages !== languages.code || session.pages >= SESSION_PAGES) {
        session?.end();
        let data = native.data.get(languages.code);
        if (!data) native.data.set(languages.code, (data = stageForNative(languages, native.tesseract.system)));
        session = new TesseractSession(native.tesseract, { tessdataDir: data.dir, languages: languages.code, dpi: reply.dpi });
        this.sessions.set(at.thread, session);
      }
      const read = await session.recognize(reply.image, at.left());
      loaded.nativeFailuresInRow = 0;
      engines.add(describeNative(native.tesseract));
      return { page: request.page, ...read, renderMs: reply.renderMs, recognizeMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (err instanceof ToolTimeout) return { page: request.page, reason: err.message, timedOut: true };
      const reason = short((err as Error).message);
      if (this.closed || this.choice === 'native') return { page: request.page, reason };
      if (++loaded.nativeFailuresInRow >= NATIVE_FAILURES && loaded.nativeUnusable === undefined) {
        loaded.nativeUnusable = `${NATIVE_FAILURES} pages in a row failed, the last: ${reason}`;
        this.options.onState?.({ event: 'fallback', engine: TESSERACT_JS, reason: loaded.nativeUnusable });
      }
      const again = await at.thread.run({ ...request, recognize: this.wasm(loaded, languages) }, at.left(), this.drawBudgetMs);
      if (!again.ok) return { page: request.page, reason: `${reason}; tesseract.js: ${short(again.message)}` };
      if (!('text' in again)) return { page: request.page, reason };
      engines.add(TESSERACT_JS);
      return pageOf(request.page, again);
    }
  }

  /** Loads once (until released): probes native Tesseract and lays out its trained data, as the choice asks. */
  private load(): Promise<Loaded> {
    this.loading ??= (async () => {
      const loaded: Loaded = { nativeFailuresInRow: 0, wasm: new Map() };
      if (this.choice !== TESSERACT_JS) {
        try {
          loaded.native = await this.loadNative();
        } catch (err) {
          loaded.nativeUnusable = short((err as Error).message);
        }
      }
      this.loaded = loaded;
      this.options.onState?.({ event: 'loaded', engine: this.current(loaded), ...(loaded.nativeUnusable && this.choice !== TESSERACT_JS ? { nativeUnusable: loaded.nativeUnusable } : {}) });
      return loaded;
    })();
    return this.loading;
  }

  private async loadNative(): Promise<NonNullable<Loaded['native']>> {
    const tesseract = await probeTesseract(this.options.tesseractPath ?? 'tesseract');
    const data = stageForNative(this.options.languages, tesseract.system);
    try {
      // Loads the trained data as a page would: a file it cannot read fails here, not on every page.
      await recognizeNative(tesseract, PROBE_IMAGE, { tessdataDir: data.dir, languages: this.languages, dpi: 300, timeoutMs: 30_000, signal: this.stop.signal });
    } catch (err) {
      data.dispose();
      throw err;
    }
    return { tesseract, data: new Map([[this.languages, data]]) };
  }

  private current(loaded: Loaded): string {
    return loaded.native && loaded.nativeUnusable === undefined && this.choice !== TESSERACT_JS ? describeNative(loaded.native.tesseract) : TESSERACT_JS;
  }

  private wasm(loaded: Loaded, languages: OcrLanguages): NonNullable<OcrPageRequest['recognize']> {
    let data = loaded.wasm.get(languages.code);
    if (!data) loaded.wasm.set(languages.code, (data = stageForTesseractJs(languages)));
    return { languages: languages.code, langPath: data.dir };
  }

  /** Ends the threads and removes the folders made for this load; the next page loads again. */
  private async release(): Promise<void> {
    clearTimeout(this.idleTimer);
    if (this.busy > 0 && !this.closed) return;
    // The next page loads afresh, while this load's threads end and its folders go.
    const loading = this.loading;
    this.loading = undefined;
    this.loaded = undefined;
    const threads = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    for (const session of this.sessions.values()) session.end();
    this.sessions.clear();
    this.releasing++;
    try {
      await Promise.all(threads.map((t) => t.end()));
      const loaded = await loading?.catch(() => undefined);
      for (const data of loaded?.native?.data.values() ?? []) data.dispose();
      for (const data of loaded?.wasm.values() ?? []) data.dispose();
    } finally {
      this.releasing--;
    }
    if (loading && !this.closed) this.options.onState?.({ event: 'released' });
  }

  private acquire(): Promise<OcrThread> {
    if (this.closed) return Promise.reject(new Error('the OCR engine is closed'));
    const ready = this.idle.pop();
    if (ready) return Promise.resolve(ready);
    if (this.all.size < this.concurrency) return Promise.resolve(this.spawn());
    return new Promise((resolve, reject) => this.waiting.push((t) => (t ? resolve(t) : reject(new Error('the OCR engine is closed')))));
  }

  private spawn(): OcrThread {
    const thread = new OcrThread(this.workerUrl, { dpi: this.dpi }, this.heapMb, (t) => this.forget(t));
    this.all.add(thread);
    return thread;
  }

  private giveBack(thread: OcrThread): void {
    if (this.closed) return;
    const waiter = this.waiting.shift();
    if (thread.dead) {
      // It timed out or crashed and was ended: whoever waits gets a fresh one.
      this.forget(thread);
      waiter?.(this.spawn());
      return;
    }
    if (waiter) waiter(thread);
    else this.idle.push(thread);
  }

  private forget(thread: OcrThread): void {
    this.sessions.get(thread)?.end();
    this.sessions.delete(thread);
    this.all.delete(thread);
    const i = this.idle.indexOf(thread);
    if (i >= 0) this.idle.splice(i, 1);
  }
}

const describeNative = (t: NativeTesseract): string => `tesseract ${t.version}`;

function pageOf(page: number, reply: Extract<OcrPageReply, { text: string }>): OcrPage {
  return { page, text: reply.text, confidence: reply.confidence, renderMs: reply.renderMs, recognizeMs: reply.recognizeMs };
}

function short(message: string): string {
  return cutChars(message.replace(/^(Error:\s*)+/, '').split('\n')[0]!, 120) || 'unknown error';
}

function positive(value: number, label: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`"${label}" must be a positive number`);
  return value;
}
