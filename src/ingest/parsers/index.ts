/**
 * The parser for each accepted content type. extract.ts runs these inside a worker; nothing else should call
 * them directly with untrusted bytes (a parser may hang, log, or exhaust memory on a hostile file).
 */
import type { DocumentType, ParsedDocument, ParseOptions } from '../types.js';
import { parse as parseDocx } from './docx.js';
import { parse as parsePdf } from './pdf.js';
import { parse as parseTxt } from './txt.js';

export type Parser = (bytes: Uint8Array, opts?: ParseOptions) => Promise<ParsedDocument>;

export const PARSERS: Record<DocumentType, Parser> = {
  'application/pdf': parsePdf,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': parseDocx,
  'text/plain': parseTxt,
};
