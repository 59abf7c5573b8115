/**
 * A page of an uploaded image (PNG, JPEG, WebP, a page of a TIFF) drawn as the WebP preview the document page shows,
 * as PDFs get theirs (pdf/thumbnail.ts): upright (EXIF orientation applied), `width` pixels wide at most and twice
 * that high at most. sharp decodes it in its own threads, within the pixel limit the image parser already held the
 * upload to. A PNG or TIFF decodes whole (up to ~300 MB at that limit), so few are drawn at once and the results
 * are kept (small: a few KB each), as the PDF renderer keeps its own.
 */
import { LRUCache } from 'lru-cache';

/** Images decoded at once in this process; the rest wait their turn. */
const AT_ONCE = 2;
/** Thumbnails (or "cannot be drawn") remembered, by content, page and width. */
const drawn = new LRUCache<string, Uint8Array | false>({ max: 256 });
let running = 0;
const waiting: (() => void)[] = [];

async function turn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((go) => waiting.push(go));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * The WebP preview of page `page` (from 1) of the image with content hash `sha256` (its bytes from `read` when not
 * kept), or null when it cannot be drawn (broken, or no such page).
 */
export async function imageThumbnail(sha256: string, read: () => Promise<Uint8Array>, page: number, width: number): Promise<Uint8Array | null> {
  const key = `${sha256}:${page}:${width}`;
  const kept = drawn.get(key);
  if (kept !== undefined) return kept || null;
  const image = await turn(async () => {
    const bytes = await read(); // a storage error is the request's, not the image's: not remembered
    // sharp (libvips) loads with the first image drawn, not with the route: a daemon that draws none never pays
    // for it (docs/ingest.md).
    const [{ default: sharp }, { MAX_IMAGE_PIXELS }] = await Promise.all([import('sharp'), import('./parsers/image.js')]);
    try {
      return await sharp(bytes, { page: page - 1, limitInputPixels: MAX_IMAGE_PIXELS })
        .rotate()
        .resize({ width, height: width * 2, fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer();
    } catch {
      return null; // as a PDF page that cannot be drawn: the preview is missing, the document is not
    }
  });
  drawn.set(key, image ?? false);
  return image;
}
