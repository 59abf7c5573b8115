/**
 * Page images for OCR, as PNM files that Leptonica (in native Tesseract and in tesseract.js) reads without
 * decompression work:
 *
 * - a page that is one upright image covering the page, as scanners make them, gives that image as stored:
 *   decoded by pdf.js but never drawn, a 1-bit scan stays 1-bit (PBM, which also spares Tesseract its
 *   thresholding) and a gray or colour one becomes 8-bit gray (PGM), at the scan's own resolution when that is
 *   200–600 dpi. Drawing a 300-dpi A4 scan onto a canvas and reading it back cost ten times its decoding
 *   (docs/ingest.md#ocr-of-scanned-pages);
 * - any other page is rendered by pdf.js onto an @napi-rs/canvas at ~300 dpi (what Tesseract's models are
 *   trained for) and turned to 8-bit gray.
 *
 * Each image comes with its count of dark pixels, so a blank page is known without recognising it. Fonts, CMaps
 * and image decoders come from the pdfjs-dist package on disk, never from the network.
 */
import { createCanvas } from '@napi-rs/canvas';
import { ImageKind, OPS, Util, type PDFDocumentProxy, type PDFPageProxy } from './pdfjs.js';
import { loadPdf } from './load.js';

export const DEFAULT_DPI = 300;
/**
 * Largest page image in pixels (RGBA while drawing: 4 bytes each). A Letter page at 300 dpi is 8.4 MP; a
 * poster-sized page is rendered at a lower resolution instead of allocating gigabytes outside the JS heap.
 */
export const MAX_PIXELS = 40_000_000;
/** Scans whose resolution Tesseract reads well as they are; others are rendered at DEFAULT_DPI. */
const EMBEDDED_DPI = { min: 200, max: 600 };
/**
 * Fewer dark pixels than one in this many is a blank page: at 300 dpi on A4 about 430 pixels, two or three
 * letters of 10-point text, more than the specks a scanner leaves on an empty sheet.
 */
const BLANK_RATIO = 20_000;

/**
 * pdf.js's own pixel budget: an image whose declared Width × Height is over it is dropped before anything is
 * decoded (evaluator's buildPaintImageXObject checks the image dictionary), which is the point — a 747 KB file
 * may declare a 16000 × 16000 image, and decoding it, then drawing it, costs gigabytes of native memory that no
 * heap limit sees. pdf.js says so only as a warning, which `withImageBudget` counts so a page can fail saying why.
 */
const OVERSIZED_WARNING = 'Image exceeded maximum allowed size';

/** Opens a PDF to draw its pages, with the pixel budget (`withImageBudget` tells when it dropped an image). */
export function openPdf(bytes: Uint8Array): Promise<PDFDocumentProxy> {
  return loadPdf(bytes, { maxImageSize: MAX_PIXELS }).promise;
}

export interface PageImage {
  width: number;
  height: number;
  dpi: number;
  /** Binary PBM (P4, 1-bit, 1 = black) or PGM (P5, 8-bit gray). */
  pnm: Uint8Array;
  /** Pixels darker than mid-gray. */
  dark: number;
  /** The page's own scan, or a rendering of the page. */
  source: 'embedded' | 'rendered';
}

/**
 * The page's image. `onDrawing` is told the pixels of its image at `dpi` (within MAX_PIXELS) before any of it is
 * interpreted: the OCR engine sizes the drawing's time budget by them.
 */
export async function pageImage(doc: PDFDocumentProxy, pageNumber: number, dpi = DEFAULT_DPI, onDrawing?: (pixels: number) => void): Promise<PageImage> {
  const page = await doc.getPage(pageNumber);
  try {
    onDrawing?.(drawnPixels(page, dpi));
    return await withImageBudget(async () => (await embeddedImage(page)) ?? (await renderPage(page, dpi)));
  } finally {
    page.cleanup();
  }
}

export class ImageTooLarge extends Error {
  override name = 'ImageTooLarge';
  constructor() {
    super(`the page has an image larger than ${MAX_PIXELS / 1_000_000} million pixels, which is not drawn (memory limit)`);
  }
}

/**
 * Runs `draw` (one page at a time in this thread) and fails it with ImageTooLarge when pdf.js dropped an image
 * over the pixel budget meanwhile: a page missing its image would read as blank, or be shown wrongly. Other
 * pdf.js warnings are dropped, as with verbosity 0.
 */
export async function withImageBudget<T>(draw: () => Promise<T>): Promise<T> {
  const log = console.warn;
  let dropped = 0;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].includes(OVERSIZED_WARNING)) dropped++;
  };
  try {
    const value = await draw();
    if (dropped > 0) throw new ImageTooLarge();
    return value;
  } finally {
    console.warn = log;
  }
}

export function isBlank(image: Pick<PageImage, 'width' | 'height' | 'dark'>): boolean {
  return image.dark < (image.width * image.height) / BLANK_RATIO;
}

interface DecodedImage {
  width: number;
  height: number;
  kind: number;
  data: Uint8Array | Uint8ClampedArray;
}

/** The page's image when the page is nothing but one upright image covering it; otherwise undefined. */
async function embeddedImage(page: PDFPageProxy): Promise<PageImage | undefined> {
  if (page.rotate % 360 !== 0) return undefined;
  const ops = await page.getOperatorList();
  let ctm: number[] = [1, 0, 0, 1, 0, 0];
  const saved: number[][] = [];
  let image: { id: string; ctm: number[] } | undefined;
  for (let i = 0; i < ops.fnArray.length; i++) {
    const args = ops.argsArray[i] as unknown[];
    switch (ops.fnArray[i]) {
      case OPS.save:
        saved.push(ctm);
        break;
      case OPS.restore:
        ctm = saved.pop() ?? ctm;
        break;
      case OPS.transform:
        ctm = Util.transform(ctm, args as number[]) as number[];
        break;
      case OPS.dependency:
        break;
      case OPS.paintImageXObject:
        if (image) return undefined;
        image = { id: args[0] as string, ctm };
        break;
      default:
        return undefined; // text, paths, masks, shadings: the page is more than a scan
    }
  }
  if (!image) return undefined;
  const [a, b, c, d, e, f] = image.ctm as [number, number, number, number, number, number];
  if (b !== 0 || c !== 0 || a <= 0 || d <= 0) return undefined;
  const [x0, y0, x1, y1] = page.view as [number, number, number, number];
  const pageArea = (x1 - x0) * (y1 - y0);
  const covered = Math.max(0, Math.min(x1, e + a) - Math.max(x0, e)) * Math.max(0, Math.min(y1, f + d) - Math.max(y0, f));
  if (covered < 0.9 * pageArea || a * d > 1.1 * pageArea) return undefined;

  const objects = image.id.startsWith('g_') ? page.commonObjs : page.objs;
  const img = await new Promise<DecodedImage | null>((resolve) => objects.get(image.id, resolve));
  if (!img?.data) return undefined;
  const dpiX = (img.width * 72) / a;
  const dpiY = (img.height * 72) / d;
  if (Math.abs(dpiX - dpiY) > 0.02 * dpiX || dpiX < EMBEDDED_DPI.min || dpiX > EMBEDDED_DPI.max) return undefined;
  if (img.width * img.height > MAX_PIXELS) return undefined;
  const dpi = Math.round(dpiX);
  if (img.kind === ImageKind.GRAYSCALE_1BPP) return { ...toPbm(img), dpi, source: 'embedded' };
  if (img.kind === ImageKind.RGB_24BPP || img.kind === ImageKind.RGBA_32BPP) return { ...toPgm(img.data, img.width, img.height, img.kind === ImageKind.RGB_24BPP ? 3 : 4), dpi, source: 'embedded' };
  return undefined;
}

/** The scale a page is rendered at: `dpi`, or less for a page whose image would be over MAX_PIXELS. */
function renderScale(page: PDFPageProxy, dpi: number): number {
  const base = page.getViewport({ scale: 1 });
  return Math.min(dpi / 72, Math.sqrt(MAX_PIXELS / Math.max(1, base.width * base.height)));
}

function drawnPixels(page: PDFPageProxy, dpi: number): number {
  const { width, height } = page.getViewport({ scale: renderScale(page, dpi) });
  return Math.ceil(width) * Math.ceil(height);
}

async function renderPage(page: PDFPageProxy, dpi: number): Promise<PageImage> {
  const scale = renderScale(page, dpi);
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
  return { ...toPgm(rgba, width, height, 4), dpi: Math.round(scale * 72), source: 'rendered' };
}

const pnmHeader = (magic: 'P4' | 'P5', width: number, height: number): Buffer =>
  Buffer.from(magic === 'P4' ? `P4\n${width} ${height}\n` : `P5\n${width} ${height}\n255\n`, 'ascii');

/** pdf.js's 1-bit rows (1 = white, each row padded to a byte) → PBM (1 = black), the same layout inverted. */
function toPbm(img: DecodedImage): Pick<PageImage, 'width' | 'height' | 'pnm' | 'dark'> {
  const { width, height, data } = img;
  const stride = (width + 7) >> 3;
  const header = pnmHeader('P4', width, height);
  const out = new Uint8Array(header.length + stride * height);
  out.set(header, 0);
  // The last byte of a row counts only its pixels, not its padding bits.
  const lastMask = (0xff << (stride * 8 - width)) & 0xff;
  let dark = 0;
  for (let y = 0, i = 0, o = header.length; y < height; y++) {
    for (let x = 0; x < stride; x++, i++, o++) {
      const black = ~(data[i] ?? 0xff) & 0xff;
      out[o] = black;
      dark += BITS[x === stride - 1 ? black & lastMask : black]!;
    }
  }
  return { width, height, pnm: out, dark };
}

/** RGB(A) → luma (ITU-R BT.601 weights, integer arithmetic; transparency laid over white) in a PGM file. */
function toPgm(pixels: Uint8Array | Uint8ClampedArray, width: number, height: number, channels: 3 | 4): Pick<PageImage, 'width' | 'height' | 'pnm' | 'dark'> {
  const header = pnmHeader('P5', width, height);
  const out = new Uint8Array(header.length + width * height);
  out.set(header, 0);
  let dark = 0;
  for (let i = 0, o = header.length; o < out.length; i += channels, o++) {
    const luma = (pixels[i]! * 299 + pixels[i + 1]! * 587 + pixels[i + 2]! * 114 + 500) / 1000;
    const alpha = channels === 4 ? pixels[i + 3]! : 255;
    const gray = alpha === 255 ? luma : (luma * alpha + 255 * (255 - alpha)) / 255;
    out[o] = gray;
    if (gray < 128) dark++;
  }
  return { width, height, pnm: out, dark };
}

/** Set bits in each byte value. */
const BITS = Uint8Array.from({ length: 256 }, (_, n) => {
  let count = 0;
  for (let v = n; v; v >>= 1) count += v & 1;
  return count;
});
