/**
 * Worker-thread entry for engine.ts: renders one PDF page at a time and recognises it with tesseract.js, which
 * runs its WebAssembly Tesseract in a thread of its own below this one (ended with this thread). The engine
 * gives this thread a heap limit and ends it when a page takes too long.
 *
 * Offline by construction: the trained data is read from `langPath` on disk (never the CDN tesseract.js falls
 * back to), nothing is cached back (`cacheMethod: 'none'`), and the core wasm is required from node_modules.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import tesseract from 'tesseract.js';
import { openPdf, renderPage } from './render.js';

export interface OcrWorkerData {
  languages: string;
  langPath: string;
  dpi: number;
}

export interface OcrPageRequest {
  id: number;
  /** Identifies the document, so its parsed form is reused for its next pages. */
  key: string;
  /** The whole PDF, shared with the engine rather than copied per page. */
  data: SharedArrayBuffer;
  page: number;
}

export type OcrPageReply =
  | { id: number; ok: true; text: string; confidence: number; renderMs: number; recognizeMs: number }
  | { id: number; ok: false; message: string };

const silent = (): void => {};
console.log = silent;
console.info = silent;
console.warn = silent;
console.debug = silent;

const config = workerData as OcrWorkerData;
const port = parentPort!;

let recognizer: Promise<tesseract.Worker> | undefined;
let current: { key: string; doc: Promise<PDFDocumentProxy> } | undefined;

function getRecognizer(): Promise<tesseract.Worker> {
  recognizer ??= (async () => {
    const worker = await tesseract.createWorker(config.languages, tesseract.OEM.LSTM_ONLY, {
      langPath: config.langPath,
      gzip: true,
      cacheMethod: 'none',
      errorHandler: silent,
    });
    // Tesseract's API defaults to one uniform block of text, which reads two columns line by line across
    // both; automatic segmentation (the tesseract CLI's default) finds the columns.
    await worker.setParameters({ tessedit_pageseg_mode: tesseract.PSM.AUTO });
    return worker;
  })();
  return recognizer;
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

async function recognize(request: OcrPageRequest): Promise<OcrPageReply> {
  const started = performance.now();
  const [doc, worker] = await Promise.all([getDocument(request), getRecognizer()]);
  const image = await renderPage(doc, request.page, config.dpi);
  const rendered = performance.now();
  // PGM carries no resolution; without it Tesseract assumes 70 dpi and misjudges text sizes.
  await worker.setParameters({ user_defined_dpi: String(image.dpi) });
  const result = await worker.recognize(image.pgm, {}, { text: true });
  const text = result.data.text ?? '';
  return {
    id: request.id,
    ok: true,
    text,
    confidence: result.data.confidence,
    renderMs: Math.round(rendered - started),
    recognizeMs: Math.round(performance.now() - rendered),
  };
}

// One page at a time: the engine sends the next page only after this one's reply.
port.on('message', (request: OcrPageRequest) => {
  recognize(request).then(
    (reply) => port.postMessage(reply),
    (err: unknown) => port.postMessage({ id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies OcrPageReply),
  );
});
