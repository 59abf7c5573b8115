/**
 * Whether a received file can be indexed, and as what: its type from its bytes (sniff.ts; a ZIP or OLE2 container
 * by what it holds), or the reason it is refused, in words for the person who sent it. Uploads and sources decide
 * the same way.
 */
import { legacyRefusal } from './office/libreoffice.js';
import { sniffCfb } from './sniff-cfb.js';
import { OLE2_CFB, sniffType, ZIP } from './sniff.js';
import { sniffZip, zipRefusal } from './sniff-zip.js';
import { acceptedTypes, type DocumentType, isLegacyOffice } from './types.js';

/** Whether this server takes legacy .doc, .xls and .ppt: LibreOffice converts them, is missing, or is turned off. */
export type LegacyOffice = 'converted' | 'not installed' | 'off';

export interface StoredFile {
  tempPath: string;
  /** Its first bytes (sniff.ts's SNIFF_BYTES are enough). */
  head: Uint8Array;
  filename: string;
  sizeBytes: number;
}

export async function fileType(f: StoredFile, legacyOffice: LegacyOffice | undefined): Promise<{ type: DocumentType } | { refused: string }> {
  const accepted = acceptedTypes(legacyOffice === 'converted');
  const head = f.sizeBytes === 0 ? null : sniffType(f.head, f.filename);
  const sniffed = head === ZIP ? await sniffZip(f.tempPath, f.head) : head === OLE2_CFB ? await sniffCfb(f.tempPath) : head;
  if (sniffed === null) {
    if (head === OLE2_CFB) return { refused: `"${f.filename}" is an encrypted Office file or another kind of OLE2 file — not supported (accepted: ${accepted})` };
    if (head === ZIP) return { refused: `"${f.filename}" ${await zipRefusal(f.tempPath)} (accepted: ${accepted})` };
    return { refused: `"${f.filename}" ${f.sizeBytes === 0 ? 'is empty' : 'is not a type docsearch reads'} (accepted: ${accepted})` };
  }
  if (isLegacyOffice(sniffed) && legacyOffice !== 'converted') return { refused: `"${f.filename}" is ${legacyRefusal(sniffed, legacyOffice === 'off')}` };
  return { type: sniffed };
}
