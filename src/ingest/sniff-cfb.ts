/**
 * Names an OLE2 compound file (CFB: the container of Office 97–2003 files) by the streams its directory lists:
 * `WordDocument` is a Word .doc, `Workbook` (or Excel 5's `Book`) an Excel .xls, `PowerPoint Document` a .ppt.
 * Anything else — an encrypted .docx/.xlsx/.pptx (`EncryptedPackage`), an Outlook .msg, a Visio drawing — is
 * none of them. Directory entries are 128-byte records that start on a 128-byte boundary of the file (sectors are
 * 512 or 4096 bytes after a 512-byte header), so they are looked for there: a name field holding the stream's name
 * in UTF-16, its length field agreeing, and the entry's type saying "stream". Text inside a stream that happens to
 * spell a name on such a boundary would also need the length and type bytes right after it.
 */
import { open } from 'node:fs/promises';
import { DOC, PPT, XLS, type LegacyOfficeType } from './types.js';

const ENTRY = 128;
const STREAM = 2;
const READ = 1024 * 1024;
const NAMES: [string, LegacyOfficeType][] = [
  ['WordDocument', DOC],
  ['Workbook', XLS],
  ['Book', XLS],
  ['PowerPoint Document', PPT],
];
const ENCODED = NAMES.map(([name, type]) => ({ name: Buffer.from(`${name}\0`, 'utf16le'), type }));

/** The legacy Office type of the compound file at `path` (or in `bytes`), or null when it is none of them. */
export async function sniffCfb(source: string | Uint8Array): Promise<LegacyOfficeType | null> {
  if (typeof source !== 'string') return typeIn(Buffer.from(source.buffer, source.byteOffset, source.byteLength));
  const file = await open(source, 'r');
  try {
    const buf = Buffer.alloc(READ);
    for (let position = 0; ; position += READ) {
      const { bytesRead } = await file.read(buf, 0, READ, position);
      const found = typeIn(buf.subarray(0, bytesRead));
      if (found || bytesRead < READ) return found;
    }
  } finally {
    await file.close();
  }
}

function typeIn(buf: Buffer): LegacyOfficeType | null {
  for (let at = 0; at + ENTRY <= buf.length; at += ENTRY) {
    for (const { name, type } of ENCODED) {
      if (buf.readUInt16LE(at + 64) === name.length && buf[at + 66] === STREAM && buf.subarray(at, at + name.length).equals(name)) return type;
    }
  }
  return null;
}
