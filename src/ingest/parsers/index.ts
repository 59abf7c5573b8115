/**
 * The parser for each accepted content type. extract.ts runs these inside a worker; nothing else should call
 * them directly with untrusted bytes (a parser may hang, log, or exhaust memory on a hostile file).
 */
import type { ParsedDocument, ParsedType, ParseOptions } from '../types.js';
import { parse as parseCsv } from './csv.js';
import { parse as parseDocx } from './docx.js';
import { parse as parseEmail } from './email.js';
import { parse as parseEpub } from './epub.js';
import { parse as parseHtml } from './html.js';
import { parse as parseImage } from './image.js';
import { parse as parseMarkdown } from './markdown.js';
import { parse as parseOdp } from './odp.js';
import { parse as parseOds } from './ods.js';
import { parse as parseOdt } from './odt.js';
import { parse as parsePdf } from './pdf.js';
import { parse as parsePptx } from './pptx.js';
import { parse as parseRtf } from './rtf.js';
import { parse as parseTxt } from './txt.js';
import { parse as parseXlsx } from './xlsx.js';

export type Parser = (bytes: Uint8Array, opts?: ParseOptions) => Promise<ParsedDocument>;

/** Legacy Office types have none: the extractor has LibreOffice convert them and reads the result (extract.ts). */
export const PARSERS: Record<ParsedType, Parser> = {
  'application/pdf': parsePdf,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': parseDocx,
  'text/plain': parseTxt,
  'text/markdown': parseMarkdown,
  'text/html': parseHtml,
  'text/csv': parseCsv,
  'text/tab-separated-values': parseCsv,
  'application/rtf': parseRtf,
  'message/rfc822': parseEmail,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': parsePptx,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': parseXlsx,
  'application/vnd.oasis.opendocument.text': parseOdt,
  'application/vnd.oasis.opendocument.presentation': parseOdp,
  'application/vnd.oasis.opendocument.spreadsheet': parseOds,
  'application/epub+zip': parseEpub,
  'image/png': parseImage,
  'image/jpeg': parseImage,
  'image/tiff': parseImage,
  'image/webp': parseImage,
};
