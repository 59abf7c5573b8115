/**
 * Decides an upload's type from its first bytes: a renamed file must not reach the wrong parser, and an
 * unsupported one is refused (415) before anything is stored. The name is only a hint between kinds of text that
 * bytes cannot tell apart (Markdown, CSV and TSV are plain text to a byte sniffer); it never turns binary into text
 * or one binary format into another.
 *
 * A ZIP is reported as `ZIP`: which format it holds (DOCX, PPTX, XLSX, ODF, EPUB) is read from inside the archive
 * by sniff-zip.ts, which needs the whole file.
 */
import { extname } from 'node:path';
import { decodeText } from './parsers/text-encoding.js';
import { CSV, EML, HTML, JPEG, MARKDOWN, PDF, PNG, RTF, TIFF, TSV, TXT, WEBP, type DocumentType } from './types.js';

/** An OLE2/CFB container: what Word writes for a password-protected .docx, and the legacy .doc/.xls/.ppt formats. */
export const OLE2_CFB = 'application/x-ole-storage';
/** A ZIP archive whose content sniff-zip.ts has yet to name. */
export const ZIP = 'application/zip';

export type SniffedType = DocumentType | typeof OLE2_CFB | typeof ZIP;

/** How many leading bytes the sniffer needs to see; more is ignored. */
export const SNIFF_BYTES = 8192;

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const BINARY_MAGIC: [number[], DocumentType][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], PNG],
  [[0xff, 0xd8, 0xff], JPEG],
  [[0x49, 0x49, 0x2a, 0x00], TIFF], // little-endian
  [[0x4d, 0x4d, 0x00, 0x2a], TIFF], // big-endian
  [[0x7b, 0x5c, 0x72, 0x74, 0x66], RTF], // {\rtf
];

const HTML_START = /^\s*(?:<!--[\s\S]*?-->\s*)*(?:<\?xml[^>]*>\s*)?(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i;
/** Header fields only a message has; a text file that opens with one of them and has From: is an e-mail. */
const MAIL_FIELD = /^(?:from|to|cc|subject|date|message-id|mime-version|received|return-path|delivered-to|reply-to|x-[a-z0-9-]+):/i;
const NAME_HINTS: Record<string, DocumentType> = {
  '.md': MARKDOWN, '.markdown': MARKDOWN, '.mdown': MARKDOWN, '.mkd': MARKDOWN,
  '.csv': CSV, '.tsv': TSV, '.tab': TSV,
  '.html': HTML, '.htm': HTML, '.xhtml': HTML,
  '.eml': EML,
};

/**
 * Returns the content type of a file from its head (the first SNIFF_BYTES bytes are enough), or null when it is
 * none the pipeline reads. `OLE2_CFB` means an encrypted Office file or a legacy .doc/.xls/.ppt; `ZIP` an archive
 * for sniff-zip.ts to open.
 */
export function sniffType(head: Uint8Array, filename?: string): SniffedType | null {
  // Readers accept %PDF- anywhere in the first 1024 bytes (junk before it is common from broken generators).
  if (indexOf(head.subarray(0, 1024 + PDF_MAGIC.length), PDF_MAGIC) >= 0) return PDF;
  if (startsWith(head, ZIP_MAGIC)) return ZIP;
  if (startsWith(head, CFB_MAGIC)) return OLE2_CFB;
  for (const [magic, type] of BINARY_MAGIC) if (startsWith(head, magic)) return type;
  if (isWebp(head)) return WEBP;
  if (head.length === 0) return null;
  const decoded = decodeText(head.subarray(0, SNIFF_BYTES), { partial: true });
  if (decoded === null) return null;
  const text = decoded.text.replace(/^\uFEFF/, '');
  if (HTML_START.test(text)) return HTML;
  if (isMail(text)) return EML;
  const hinted = filename ? NAME_HINTS[extname(filename).toLowerCase()] : undefined;
  // A name saying HTML or e-mail on text that is neither is read as the text it is.
  return hinted === MARKDOWN || hinted === CSV || hinted === TSV ? hinted : TXT;
}

/** The image type of a file's first bytes, or null (the OCR stage's test for "an image, not a PDF"). */
export function imageType(head: Uint8Array): DocumentType | null {
  if (isWebp(head)) return WEBP;
  const found = BINARY_MAGIC.find(([magic]) => startsWith(head, magic))?.[1];
  return found && found !== RTF ? found : null;
}

function isWebp(head: Uint8Array): boolean {
  const riff = [0x52, 0x49, 0x46, 0x46];
  const webp = [0x57, 0x45, 0x42, 0x50];
  return startsWith(head, riff) && webp.every((b, i) => head[8 + i] === b);
}

/** RFC 5322: the message opens with header fields (folded lines allowed) and has a From: among them. */
function isMail(text: string): boolean {
  const lines = text.split(/\r?\n/);
  if (!MAIL_FIELD.test(lines[0] ?? '')) return false;
  let from = false;
  for (const line of lines.slice(0, 200)) {
    if (line === '') return from;
    if (/^[ \t]/.test(line)) continue; // a folded continuation
    if (!/^[!-9;-~]+:/.test(line)) return false;
    if (/^from:/i.test(line)) from = true;
  }
  return from;
}

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

function indexOf(bytes: Uint8Array, magic: number[]): number {
  const first = magic[0]!;
  for (let i = bytes.indexOf(first); i >= 0 && i + magic.length <= bytes.length; i = bytes.indexOf(first, i + 1)) {
    if (magic.every((b, j) => bytes[i + j] === b)) return i;
  }
  return -1;
}
