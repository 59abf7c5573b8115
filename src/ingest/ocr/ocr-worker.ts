/**
 * Worker-thread entry for engine.ts: makes the image of one PDF page at a time (pdf/page-image.ts; an uploaded image's
 * page through image-page.ts) and either hands it
 * back (native Tesseract reads it in a process of its own) or recognises it here with tesseract.js, which runs
 * its WebAssembly Tesseract in a thread of its own below this one (ended with this thread). A blank page is
 * answered as such, with no recognition. The engine gives this thread a heap limit and ends it when a page takes
 * too long, or its drawing does: the thread says its id (so the engine counts its processor time), when it starts
 * drawing a PDF page (with the image's size, which the drawing's budget follows) and when the drawing is done.
 *
 * The thread runs at a lower CPU priority (on Linux nice is per thread, and the thread tesseract.js starts
 * inherits it), so searches get the cores first.
 *
 * Offline by construction: the trained data is read from `langPath` on disk (never the CDN tesseract.js falls
 * back to), nothing is cached back (`cacheMethod: 'none'`), and the core wasm is required from node_modules.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { PDFDocumentProxy } from '../../pdf/pdfjs.js';
import type tesseract from 'tesseract.js';
import { ownThreadId } from '../../core/thread-cpu.js';
import { BACKGROUND_NICE } from '../run-tool.js';
import { imageType } from '../sniff.js';
import { imagePage } from './image-page.js';
import { isBlank, openPdf, pageImage } from '../../pdf/page-image.js';

export interface OcrWorkerData {
  dpi: number;
}

export interface OcrPageRequest {
  id: number;
  /** Identifies the document, so its parsed form is reused for its next pages. */
  key: string;
  /** The whole PDF, shared with the engine rather than copied per page. */
  data: SharedArrayBuffer;
  page: number;
  /** Recognise with tesseract.js (languages and their folder), or only return the image. */
  recognize?: { languages: string; langPath: string };
}

export type OcrPageReply = { id: number; renderMs: number } & (
  | { ok: true; blank: true }
  | { ok: true; blank?: false; text: string; confidence: number; recognizeMs: number }
  | { ok: true; blank?: false; image: Uint8Array; dpi: number }
  | { ok: false; message: string }
);

/** What the thread says besides replies: its id, once; a PDF page's drawing starting (its pixels) and done. */
export type OcrThreadNote = { thread: number } | { id: number; drawing: number } | { id: number; drawn: true };

const silent = (): void => {};
console.log = silent;
console.info = silent;
console.warn = silent;
console.debug = silent;

const config = workerData as OcrWorkerData;
const port = parentPort!;
if (process.platform === 'linux') setPriority(BACKGROUND_NICE);
const thread = ownThreadId();
if (thread !== undefined) port.postMessage({ thread } satisfies OcrThreadNote);

let recognizer: { key: string; worker: Promise<tesseract.Worker> } | undefined;
let current: { key: string; doc: Promise<PDFDocumentProxy> } | undefined;

function getRecognizer(languages: string, langPath: string): Promise<tesseract.Worker> {
  const key = `${languages}\n${langPath}`;
  if (recognizer?.key !== key) {
    void recognizer?.worker.then((w) => w.terminate()).catch(silent);
    recognizer = {
      key,
      worker: (async () => {
        const { default: tesseractJs } = await import('tesseract.js');
        const worker = await tesseractJs.createWorker(languages, tesseractJs.OEM.LSTM_ONLY, { langPath, gzip: true, cacheMethod: 'none', errorHandler: silent });
        // Tesseract's API defaults to one uniform block of text, which reads two columns line by line across
        // both; automatic segmentation (the tesseract CLI's default) finds the columns.
        await worker.setParameters({ tessedit_pageseg_mode: tesseractJs.PSM.AUTO });
        return worker;
      })(),
    };
  }
  return recognizer.worker;
}

function getDocument(request: OcrPageRequest): Promise<PDFDocumentProxy> {
  if (current?.key !== request.key) {
    const previous = current;
    // pdf.js may keep or detach what it is given; it gets its own copy of the shared bytes.
    current = { key: request.key, doc: openPdf(new Uint8Array(request.data).slice()) };
    void previous?.doc.then((d) => d.destroy()).catch(silent);
  }
  return current.doc;
}

async function handle(request: OcrPageRequest): Promise<{ reply: OcrPageReply; transfer: ArrayBuffer[] }> {
  const started = performance.now();
  const worker = request.recognize ? getRecognizer(request.recognize.languages, request.recognize.langPath) : undefined;
  // An uploaded image is its own page; a PDF's page is drawn by pdf.js.
  const bytes = new Uint8Array(request.data, 0, Math.min(16, request.data.byteLength));
  const pdf = !imageType(bytes);
  const image = pdf
    ? await pageImage(await getDocument(request), request.page, config.dpi, (pixels) => port.postMessage({ id: request.id, drawing: pixels } satisfies OcrThreadNote))
    : await imagePage(new Uint8Array(request.data), request.page);
  if (pdf) port.postMessage({ id: request.id, drawn: true } satisfies OcrThreadNote);
  const rendered = performance.now();
  const renderMs = Math.round(rendered - started);
  if (isBlank(image)) return { reply: { id: request.id, ok: true, blank: true, renderMs }, transfer: [] };
  // The image's buffer is its own (page-image.ts allocates it whole): moved to the engine, not copied.
  if (!worker) return { reply: { id: request.id, ok: true, image: image.pnm, dpi: image.dpi, renderMs }, transfer: [image.pnm.buffer as ArrayBuffer] };
  const w = await worker;
  // PNM carries no resolution; without it Tesseract assumes 70 dpi and misjudges text sizes.
  await w.setParameters({ user_defined_dpi: String(image.dpi) });
  const result = await w.recognize(Buffer.from(image.pnm.buffer, image.pnm.byteOffset, image.pnm.byteLength), {}, { text: true });
  return {
    reply: { id: request.id, ok: true, text: result.data.text ?? '', confidence: result.data.confidence, renderMs, recognizeMs: Math.round(performance.now() - rendered) },
    transfer: [],
  };
}

// One page at a time: the engine sends the next page only after this one's reply.
port.on('message', (request: OcrPageRequest) => {
  handle(request).then(
    ({ reply, transfer }) => port.postMessage(reply, transfer),
    (err: unknown) => port.postMessage({ id: request.id, ok: false, renderMs: 0, message: err instanceof Error ? err.message : String(err) } satisfies OcrPageReply),
  );
});
