/**
 * The parser for each accepted content type. extract.ts runs these inside a worker; nothing else should call
 * them directly with untrusted bytes (a parser may hang, log, or exhaust memory on a hostile file).
 *
 * Each is loaded on first use: a parse worker that only ever reads text should not load pdf.js, sharp and the
 * office libraries (all of them cost a new worker ~0.4 CPU-s and ~65 MB; the text parser alone a twentieth).
 */
import type { ParsedDocument, ParsedType, ParseOptions } from '../types.js';

export type Parser = (bytes: Uint8Array, opts?: ParseOptions) => Promise<ParsedDocument>;

type LoadParser = () => Promise<Parser>;

const csv: LoadParser = () => import('./csv.js').then((m) => m.parse);
const image: LoadParser = () => import('./image.js').then((m) => m.parse);

/** Legacy Office types have none: the extractor has LibreOffice convert them and reads the result (extract.ts). */
export const PARSERS: Record<ParsedType, LoadParser> = {
  'application/pdf': () => import('./pdf.js').then((m) => m.parse),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': () => import('./docx.js').then((m) => m.parse),
  'text/plain': () => import('./txt.js').then((m) => m.parse),
  'text/markdown': () => import('./markdown.js').then((m) => m.parse),
  'text/html': () => import('./html.js').then((m) => m.parse),
  'text/csv': csv,
  'text/tab-separated-values': csv,
  'application/rtf': () => import('./rtf.js').then((m) => m.parse),
  'message/rfc822': () => import('./email.js').then((m) => m.parse),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': () => import('./pptx.js').then((m) => m.parse),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': () => import('./xlsx.js').then((m) => m.parse),
  'application/vnd.oasis.opendocument.text': () => import('./odt.js').then((m) => m.parse),
  'application/vnd.oasis.opendocument.presentation': () => import('./odp.js').then((m) => m.parse),
  'application/vnd.oasis.opendocument.spreadsheet': () => import('./ods.js').then((m) => m.parse),
  'application/epub+zip': () => import('./epub.js').then((m) => m.parse),
  'image/png': image,
  'image/jpeg': image,
  'image/tiff': image,
  'image/webp': image,
};
