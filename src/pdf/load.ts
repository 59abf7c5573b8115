/**
 * The one way docsearch opens a PDF with pdf.js (pdfjs-dist, legacy build for Node): fonts, CMaps, image decoders
 * and colour profiles from the package on disk, never from the network or the system; no `eval` of font programs.
 * In Node pdf.js runs its "worker" side on the calling thread: every caller (the parse worker, the OCR worker, the
 * thumbnail threads) is already a worker thread with a time and heap limit.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument, VerbosityLevel, type PDFDocumentLoadingTask } from './pdfjs.js';

const PDFJS_ROOT = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const asset = (folder: string): string => `${join(PDFJS_ROOT, folder)}/`;

export interface LoadOptions {
  /** pdf.js's pixel budget: an image declaring more pixels is dropped before it is decoded (default: none). */
  maxImageSize?: number;
  /**
   * Lay out a pure XFA form (one whose pages are only a "Please wait..." placeholder): pdf.js then gives the form's
   * pages, as HTML, instead of the placeholder (`isPureXfa`, `allXfaHtml`). Off for renderers: the page images
   * stay those of the PDF's own pages.
   */
  xfa?: boolean;
}

/**
 * Starts loading `data` (pdf.js may transfer or detach it: pass a copy you can lose). Warnings stay on, on
 * console.warn: the parser names damaged pages by them and the renderers learn of dropped images.
 */
export function loadPdf(data: Uint8Array, opts: LoadOptions = {}): PDFDocumentLoadingTask {
  return getDocument({
    data,
    verbosity: VerbosityLevel.WARNINGS,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    // Decoded images as pixel arrays (not bitmaps), which the OCR stage reads.
    isOffscreenCanvasSupported: false,
    stopAtErrors: false,
    cMapUrl: asset('cmaps'),
    cMapPacked: true,
    standardFontDataUrl: asset('standard_fonts'),
    wasmUrl: asset('wasm'),
    iccUrl: asset('iccs'),
    enableXfa: opts.xfa ?? false,
    ...(opts.maxImageSize === undefined ? {} : { maxImageSize: opts.maxImageSize }),
  });
}
