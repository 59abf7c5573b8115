/**
 * Page images for OCR: a PDF page rendered by pdf.js onto an @napi-rs/canvas at ~300 dpi (what Tesseract's
 * models are trained for), as an 8-bit grayscale PGM. PGM needs no compression work and Leptonica reads it
 * directly. Fonts, CMaps and image decoders come from the pdfjs-dist package on disk, never from the network.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

export const DEFAULT_DPI = 300;
/**
 * Largest page image in pixels (RGBA while drawing: 4 bytes each). A Letter page at 300 dpi is 8.4 MP; a
 * poster-sized page is rendered at a lower resolution instead of allocating gigabytes outside the JS heap.
 */
export const MAX_PIXELS = 40_000_000;

const pdfjsRoot = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const asset = (folder: string): string => `${join(pdfjsRoot, folder)}/`;

export function openPdf(bytes: Uint8Array): Promise<PDFDocumentProxy> {
  return getDocument({
    data: bytes,
    standardFontDataUrl: asset('standard_fonts'),
    cMapUrl: asset('cmaps'),
    cMapPacked: true,
    wasmUrl: asset('wasm'),
    iccUrl: asset('iccs'),
    useSystemFonts: false,
    isEvalSupported: false,
    verbosity: 0,
  }).promise;
}

export interface PageImage {
  width: number;
  height: number;
  dpi: number;
  /** Binary PGM (P5), 8-bit gray. */
  pgm: Buffer;
}

export async function renderPage(doc: PDFDocumentProxy, pageNumber: number, dpi = DEFAULT_DPI): Promise<PageImage> {
  const page = await doc.getPage(pageNumber);
  try {
    const base = page.getViewport({ scale: 1 });
    const scale = Math.min(dpi / 72, Math.sqrt(MAX_PIXELS / Math.max(1, base.width * base.height)));
    const viewport = page.getViewport({ scale });
    const width = Math.max(1, Math.ceil(viewport.width));
    const height = Math.max(1, Math.ceil(viewport.height));
    const canvas = createCanvas(width, height);
    const context = canvas.getContext('2d');
    // Scans with transparency (and every page's background) must read as paper, not black.
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, height);
    await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
    const rgba = context.getImageData(0, 0, width, height).data;
    return { width, height, dpi: Math.round(scale * 72), pgm: toPgm(rgba, width, height) };
  } finally {
    page.cleanup();
  }
}

/** RGBA → luma (ITU-R BT.601 weights, integer arithmetic) in a PGM container. */
function toPgm(rgba: Uint8ClampedArray, width: number, height: number): Buffer {
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'ascii');
  const out = Buffer.allocUnsafe(header.length + width * height);
  header.copy(out, 0);
  for (let i = 0, o = header.length; i < rgba.length; i += 4, o++) {
    out[o] = (rgba[i]! * 299 + rgba[i + 1]! * 587 + rgba[i + 2]! * 114 + 500) / 1000;
  }
  return out;
}
