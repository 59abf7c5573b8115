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

/** Each import() names its module literally, so the bundler and the dependency rules still see it. */
const lazy =
  (load: () => Promise<{ parse: Parser }>): LoadParser =>
  () =>
    load().then((m) => m.parse);

const csv = lazy(() => import('./csv.js'));
const image = lazy(() => import('./image.js'));

/** Legacy Office types have none: the extractor has LibreOffice convert them and reads the result (extract.ts). */
export const PARSERS: Record<ParsedType, LoadParser> = {
  'application/pdf': lazy(() => import('./pdf.js')),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': lazy(() => import('./docx.js')),
  'text/plain': lazy(() => import('./txt.js')),
  'text/markdown': lazy(() => import('./markdown.js')),
  'text/html': lazy(() => import('./html.js')),
  'text/csv': csv,
  'text/tab-separated-values': csv,
  'application/rtf': lazy(() => import('./rtf.js')),
  'message/rfc822': lazy(() => import('./email.js')),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': lazy(() => import('./pptx.js')),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': lazy(() => import('./xlsx.js')),
  'application/vnd.oasis.opendocument.text': lazy(() => import('./odt.js')),
  'application/vnd.oasis.opendocument.presentation': lazy(() => import('./odp.js')),
  'application/vnd.oasis.opendocument.spreadsheet': lazy(() => import('./ods.js')),
  'application/epub+zip': lazy(() => import('./epub.js')),
  'image/png': image,
  'image/jpeg': image,
  'image/tiff': image,
  'image/webp': image,
};
