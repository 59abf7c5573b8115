/**
 * PDF with pdf2json. pdf2json has habits this file contains: it may report twice (settled once here), it reports
 * most failures as bare pdf.js messages ("Invalid XRef stream header"), and it logs to the console and can throw
 * from its own timers — run it through extract.ts, whose worker silences the console and turns a stray throw
 * into this document's failure instead of the daemon's.
 */
import PDFParser from 'pdf2json';
import type { ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { layoutPages, toBlocks, type PdfPage } from './pdf-layout.js';

export const ENCRYPTED = 'encrypted PDF — not supported';
export const NO_TEXT_LAYER = 'no text layer (scanned?)';

interface Pdf2jsonOutput {
  Meta?: Record<string, unknown>;
  Pages: PdfPage[];
}

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const head = latin1(bytes.subarray(0, 1024));
  if (!head.includes('%PDF-')) throw new ParseError('not a PDF file (no %PDF header)');

  // No font anywhere (and no compressed object streams that could hide one) means nothing is drawn as text:
  // a scan or text converted to outlines. pdf2json is slow on, and sometimes stalls in, such image data.
  const raw = latin1(bytes);
  const pageObjects = raw.match(/\/Type\s*\/Page(?!s)\b/g)?.length ?? 0;
  if (pageObjects > 0 && !/\/Font\b/.test(raw) && !/\/ObjStm\b/.test(raw) && raw.lastIndexOf('%%EOF') > raw.length - 2048) {
    return { pages: pageObjects, blocks: [], ocrPages: allPages(pageObjects), warnings: [NO_TEXT_LAYER] };
  }

  let data: Pdf2jsonOutput;
  try {
    data = await runPdf2json(bytes);
  } catch (err) {
    const message = errorMessage(err);
    if (/password|encrypt/i.test(message) || hasEncryptDictionary(bytes)) throw new ParseError(ENCRYPTED, { cause: err });
    throw new ParseError(`the PDF is damaged or truncated: ${damageReason(bytes, message)}`, { cause: err });
  }

  const pages = Array.isArray(data.Pages) ? data.Pages : [];
  const laidOut = layoutPages(pages);
  const { blocks, firstHeading } = toBlocks(laidOut);
  const warnings: string[] = [];
  const doc: ParsedDocument = { pages: pages.length, blocks, warnings };
  if (blocks.length === 0) {
    warnings.push(NO_TEXT_LAYER);
    doc.ocrPages = allPages(pages.length);
  } else {
    const empty = laidOut.filter((p) => p.paragraphs.length === 0).length;
    if (empty > 0 && empty >= pages.length / 2) warnings.push(`${empty} of ${pages.length} pages have no text layer (scanned?)`);
  }

  const title = metaTitle(data.Meta) ?? firstHeading;
  if (title) doc.title = title;
  return doc;
}

const allPages = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1);

function runPdf2json(bytes: Uint8Array): Promise<Pdf2jsonOutput> {
  // pdf2json re-wraps a Buffer whose ArrayBuffer is larger than the view from offset 0, which reads the wrong
  // bytes for pooled or sliced buffers; give it a Buffer that owns exactly its own ArrayBuffer.
  const owned = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(owned).set(bytes);
  const buffer = Buffer.from(owned);
  return new Promise((resolve, reject) => {
    let settled = false;
    const parser = new PDFParser(null, false);
    parser.on('pdfParser_dataReady', (data) => {
      if (settled) return;
      settled = true;
      resolve(data as unknown as Pdf2jsonOutput);
    });
    parser.on('pdfParser_dataError', (err) => {
      if (settled) return;
      settled = true;
      reject((err as { parserError?: unknown } | undefined)?.parserError ?? err);
    });
    try {
      parser.parseBuffer(buffer, 0);
    } catch (err) {
      if (!settled) {
        settled = true;
        reject(err);
      }
    }
  });
}

function hasEncryptDictionary(bytes: Uint8Array): boolean {
  return /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(latin1(bytes));
}

/** pdf.js messages mean little to a person; say what is wrong with the file instead where we can tell. */
function damageReason(bytes: Uint8Array, message: string): string {
  const tail = latin1(bytes.subarray(Math.max(0, bytes.length - 2048)));
  if (!tail.includes('%%EOF')) return 'the file ends early (an interrupted upload or download?)';
  if (/xref/i.test(message)) return 'its cross-reference table is broken';
  if (/stream|compression|flate|filter/i.test(message)) return 'a content stream cannot be decoded';
  if (/TypeError|RangeError|undefined|null|is not a function|Cannot read/i.test(message)) {
    return 'its internal structure cannot be read';
  }
  return message.replace(/^(Error:\s*)+/, '').split('\n')[0]!.slice(0, 120);
}

function metaTitle(meta: Record<string, unknown> | undefined): string | undefined {
  const raw = meta?.['Title'];
  if (typeof raw !== 'string') return undefined;
  const title = raw.replace(/^Microsoft (Word|PowerPoint) - /, '').replace(/\s+/g, ' ').trim();
  // Generator defaults ("Untitled", a file name) say nothing about the content.
  if (!title || /^untitled|\.(docx?|pdf|pptx?|tex|dvi)$/i.test(title)) return undefined;
  return title;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
