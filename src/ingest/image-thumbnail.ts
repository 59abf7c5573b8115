/**
 * A page of an uploaded image (PNG, JPEG, WebP, a page of a TIFF) drawn as the WebP preview the document page shows,
 * as PDFs get theirs (pdf/thumbnail.ts): upright (EXIF orientation applied), `width` pixels wide at most and twice
 * that high at most. sharp decodes it in its own threads, within the pixel limit the image parser already held the
 * upload to.
 */
import sharp from 'sharp';
import { MAX_IMAGE_PIXELS } from './parsers/image.js';

/** The WebP preview of page `page` (from 1) of `bytes`, or null when it cannot be drawn (broken, or no such page). */
export async function imageThumbnail(bytes: Uint8Array, page: number, width: number): Promise<Uint8Array | null> {
  try {
    return await sharp(bytes, { page: page - 1, limitInputPixels: MAX_IMAGE_PIXELS })
      .rotate()
      .resize({ width, height: width * 2, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
  } catch {
    return null; // as a PDF page that cannot be drawn: the preview is missing, the document is not
  }
}
