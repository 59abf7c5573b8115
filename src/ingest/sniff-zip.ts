/**
 * Names a ZIP by what it holds, never by its file name: the `mimetype` entry of ODF and EPUB (stored first and
 * uncompressed, by their specifications), the main part's content type in OOXML's `[Content_Types].xml`, and
 * the parts each format must have when those are missing. Only the central directory and these two small entries
 * are read, through yauzl (which stops an entry that inflates past its declared size).
 *
 * An archive whose directory cannot be read (truncated) is named from the local headers in its head, so a damaged
 * EPUB fails as a damaged EPUB; a ZIP of none of these formats is `null` (refused, 415).
 */
import yauzl from 'yauzl';
import { cutChars } from '../core/code-points.js';
import { ownTable } from '../core/own-table.js';
import { printable } from '../core/unsafe-text.js';
import { DEFAULT_ZIP_LIMITS } from './parsers/zip-guard.js';
import { DOCX, EPUB, ODP, ODS, ODT, PPTX, XLSX, type DocumentType } from './types.js';

/** More entries than this are not listed for naming (the parser's zip guard refuses the archive anyway). */
const MAX_NAMED_ENTRIES = 20_000;
/** `[Content_Types].xml` and `mimetype` are small; a larger one is not read. */
const MAX_DESCRIPTOR_BYTES = 1024 * 1024;

/** Without a prototype: an archive whose `mimetype` said `constructor` got Object's function as its type (a 500). */
const MIMETYPES = ownTable<Record<string, DocumentType>>({
  'application/epub+zip': EPUB,
  'application/vnd.oasis.opendocument.text': ODT,
  'application/vnd.oasis.opendocument.text-template': ODT,
  'application/vnd.oasis.opendocument.presentation': ODP,
  'application/vnd.oasis.opendocument.presentation-template': ODP,
  'application/vnd.oasis.opendocument.spreadsheet': ODS,
  'application/vnd.oasis.opendocument.spreadsheet-template': ODS,
});

/** Main-part content types (`…main+xml`) of the OOXML formats, macro-enabled and template variants included. */
const MAIN_PARTS: [RegExp, DocumentType][] = [
  [/wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroenabled/i, DOCX],
  [/presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroenabled/i, PPTX],
  [/spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.macroenabled/i, XLSX],
];

const REQUIRED_PARTS: [string, DocumentType][] = [
  ['word/document.xml', DOCX],
  ['ppt/presentation.xml', PPTX],
  ['xl/workbook.xml', XLSX],
  ['META-INF/container.xml', EPUB],
];

/** The format a ZIP holds: `source` is the file's path or its bytes; `head` its first bytes (for a damaged one). */
export async function sniffZip(source: string | Buffer, head: Uint8Array): Promise<DocumentType | null> {
  let zip: yauzl.ZipFile;
  try {
    zip = await open(source);
  } catch {
    return fromHead(Buffer.from(head.buffer, head.byteOffset, head.byteLength));
  }
  try {
    const names = new Set<string>();
    let mimetype: yauzl.Entry | undefined;
    let contentTypes: yauzl.Entry | undefined;
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        names.add(entry.fileName);
        if (entry.fileName === 'mimetype') mimetype = entry;
        if (entry.fileName === '[Content_Types].xml') contentTypes = entry;
        if (names.size >= MAX_NAMED_ENTRIES) resolve();
        else zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
    if (mimetype) {
      const named = MIMETYPES[(await read(zip, mimetype)).toString('latin1').trim()];
      if (named) return named;
    }
    if (contentTypes) {
      const xml = (await read(zip, contentTypes)).toString('utf8');
      for (const [pattern, type] of MAIN_PARTS) if (pattern.test(xml)) return type;
    }
    for (const [part, type] of REQUIRED_PARTS) if (names.has(part)) return type;
    return null;
  } catch {
    return fromHead(Buffer.from(head.buffer, head.byteOffset, head.byteLength));
  } finally {
    zip.close();
  }
}

/**
 * Why a ZIP that names no format (sniffZip: null) is refused, as the words after its file name: more entries than the
 * zip guard opens (the limit said), none, folders only, or the files it holds — docsearch reads ZIP-based formats,
 * it does not unpack archives — or damaged. "Holds no document", said of all of these, sent people looking for the
 * wrong fault.
 */
export async function zipRefusal(source: string | Buffer): Promise<string> {
  let zip: yauzl.ZipFile;
  try {
    zip = await open(source);
  } catch (err) {
    return `is a damaged ZIP archive (${cutChars(printable(err instanceof Error ? err.message : String(err)), 100)})`;
  }
  try {
    const max = DEFAULT_ZIP_LIMITS.maxEntries;
    const count = (n: number) => n.toLocaleString('en-US');
    if (zip.entryCount > max) return `is a ZIP archive of ${count(zip.entryCount)} entries, more than the ${count(max)} docsearch opens`;
    if (zip.entryCount === 0) return 'is an empty ZIP archive';
    const files: string[] = [];
    let folders = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) folders++;
        else files.push(entry.fileName);
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
    if (files.length === 0) return `is a ZIP archive of folders only (${count(folders)}), with no file in it`;
    const named = files.slice(0, 3).map((f) => `"${cutChars(printable(f), 60)}"`).join(', ');
    const more = files.length > 3 ? ` and ${count(files.length - 3)} more` : '';
    const held = `${count(files.length)} file${files.length === 1 ? '' : 's'} (${named}${more})`;
    return `is a ZIP archive of ${held}, ${files.length === 1 ? 'not' : 'none of them'} the parts of a DOCX, XLSX, PPTX, ODF or EPUB document: docsearch does not unpack archives, upload the files in it instead`;
  } catch (err) {
    return `is a damaged ZIP archive (${cutChars(printable(err instanceof Error ? err.message : String(err)), 100)})`;
  } finally {
    zip.close();
  }
}

/** A damaged archive: the `mimetype` entry's stored bytes, or the first local headers' part names. */
function fromHead(head: Buffer): DocumentType | null {
  const text = head.toString('latin1');
  const stored = /^PK\x03\x04[\s\S]{26}mimetype([a-z0-9.+\/-]+)/.exec(text);
  if (stored && MIMETYPES[stored[1]!]) return MIMETYPES[stored[1]!]!;
  for (const [part, type] of REQUIRED_PARTS) if (text.includes(part)) return type;
  if (text.includes('ppt/')) return PPTX;
  if (text.includes('xl/')) return XLSX;
  if (text.includes('word/')) return DOCX;
  return null;
}

function open(source: string | Buffer): Promise<yauzl.ZipFile> {
  const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false };
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, zip?: yauzl.ZipFile) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip));
    if (typeof source === 'string') yauzl.open(source, options, done);
    else yauzl.fromBuffer(source, options, done);
  });
}

function read(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  if (entry.uncompressedSize > MAX_DESCRIPTOR_BYTES) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(err ?? new Error(`cannot read ${entry.fileName}`));
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}
