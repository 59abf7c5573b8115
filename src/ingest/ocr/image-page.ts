/**
 * One page of an uploaded image (PNG, JPEG, WebP, a page of a TIFF) as the 8-bit gray PGM the OCR stage reads,
 * drawn with sharp: the EXIF orientation is applied first (a phone photo taken sideways is read upright), and the
 * pixel limit is sharp's own, checked before decoding.
 */
import sharp from 'sharp';
import { MAX_IMAGE_PIXELS } from '../parsers/image.js';
import type { PageImage } from '../../pdf/page-image.js';

/** Images are taken as scanned at this resolution when they do not say (Tesseract needs one to size text). */
const ASSUMED_DPI = 300;

export async function imagePage(bytes: Uint8Array, page: number): Promise<PageImage> {
  const image = sharp(bytes, { page: page - 1, limitInputPixels: MAX_IMAGE_PIXELS }).rotate().flatten({ background: '#ffffff' }).greyscale();
  const [{ data, info }, meta] = await Promise.all([image.raw().toBuffer({ resolveWithObject: true }), sharp(bytes, { page: page - 1, limitInputPixels: MAX_IMAGE_PIXELS }).metadata()]);
  const header = Buffer.from(`P5\n${info.width} ${info.height}\n255\n`, 'ascii');
  const pnm = new Uint8Array(header.length + info.width * info.height);
  pnm.set(header);
  let dark = 0;
  for (let i = 0; i < info.width * info.height; i++) {
    const v = data[i * info.channels]!;
    pnm[header.length + i] = v;
    if (v < 128) dark++;
  }
  const dpi = meta.density && meta.density >= 70 && meta.density <= 1200 ? Math.round(meta.density) : ASSUMED_DPI;
  return { width: info.width, height: info.height, dpi, pnm, dark, source: 'embedded' };
}
