/**
 * Decides an upload's type from its first bytes, never from its name: a renamed file must not reach the wrong
 * parser, and an unsupported one is refused (415) before anything is stored.
 */
import { decodeText } from './parsers/text-encoding.js';
import { DOCX, PDF, TXT, type DocumentType } from './types.js';

/** An OLE2/CFB container: what Word writes for a password-protected .docx, and the legacy .doc format. */
export const OLE2_CFB = 'application/x-ole-storage';

export type SniffedType = DocumentType | typeof OLE2_CFB;

/** How many leading bytes the sniffer needs to see; more is ignored. */
export const SNIFF_BYTES = 8192;

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/**
 * Returns the content type of a file from its head (the first SNIFF_BYTES bytes are enough), or null when it is
 * none of PDF, DOCX, TXT. A ZIP is reported as DOCX; the DOCX parser confirms `word/document.xml`.
 * `OLE2_CFB` means an encrypted .docx or a legacy .doc: callers reject it with "encrypted or legacy .doc — not supported".
 * `_filename` is accepted for call-site symmetry and deliberately unused.
 */
export function sniffType(head: Uint8Array, _filename?: string): SniffedType | null {
  // Readers accept %PDF- anywhere in the first 1024 bytes (junk before it is common from broken generators).
  if (indexOf(head.subarray(0, 1024 + PDF_MAGIC.length), PDF_MAGIC) >= 0) return PDF;
  if (startsWith(head, ZIP_MAGIC)) return DOCX;
  if (startsWith(head, CFB_MAGIC)) return OLE2_CFB;
  if (head.length === 0) return null;
  return decodeText(head.subarray(0, SNIFF_BYTES), { partial: true }) === null ? null : TXT;
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
