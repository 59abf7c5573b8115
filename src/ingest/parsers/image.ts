/**
 * Images (PNG, JPEG, TIFF, WebP): no text of their own — every page (a multi-page TIFF has several) goes to the OCR
 * stage, which draws it with sharp (ocr/image-page.ts, EXIF orientation applied). Here sharp only reads the header:
 * the size is checked against MAX_IMAGE_PIXELS before anything is decoded, so a 40,000 × 40,000 image fails its
 * document at once.
 */
import sharp, { type Metadata } from 'sharp';
import { cutChars } from '../../core/code-points.js';
import type { ParsedDocument, ParseOptions } from '../types.js';
import { TYPE_NAMES, type DocumentType } from '../types.js';
import { ParseError } from './errors.js';

/** Most pixels one page may have (a 600 dpi A3 scan is ~70 million). */
export const MAX_IMAGE_PIXELS = 100_000_000;
/** Most pages of a multi-page image. */
export const MAX_IMAGE_PAGES = 500;
/** What the OCR stage answers once it read text (its NO_TEXT_LAYER rule). */
export const IMAGE_NOTE = 'no text layer (an image: OCR reads it)';

export async function parse(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const noun = `the ${opts.type ? TYPE_NAMES[opts.type as DocumentType] : ''} image`.replace('  ', ' ');
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ParseError(`${noun} could not be read: ${cutChars((err instanceof Error ? err.message : String(err)).split('\n')[0]!, 120)}`, { cause: err });
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new ParseError(`${noun} is ${width.toLocaleString('en')} × ${height.toLocaleString('en')} pixels — more than the ${MAX_IMAGE_PIXELS / 1_000_000}-million-pixel limit`);
  }
  if (width === 0 || height === 0) throw new ParseError(`${noun} could not be read: it has no pixels`);
  const pages = Math.max(1, meta.pages ?? 1);
  if (pages > MAX_IMAGE_PAGES) throw new ParseError(`${noun} has ${pages} pages — more than ${MAX_IMAGE_PAGES}`);
  return { blocks: [], pages, ocrPages: Array.from({ length: pages }, (_, i) => i + 1), warnings: [IMAGE_NOTE] };
}
