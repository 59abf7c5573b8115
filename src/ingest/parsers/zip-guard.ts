/**
 * Zip-bomb guard for .docx, run before mammoth. JSZip (inside mammoth) inflates whatever the archive claims, so
 * the limits are checked here on the central directory, and the XML parts — the ones mammoth inflates — are
 * inflated once through yauzl, which stops a stream that grows past its declared size. Also the place that tells
 * "not a Word document" from "damaged Word document".
 */
import yauzl from 'yauzl';
import { ParseError } from './errors.js';

export interface ZipLimits {
  /** Most entries an archive may list. */
  maxEntries: number;
  /** Most bytes all entries may inflate to, together. */
  maxTotalUncompressed: number;
  /** Highest uncompressed/compressed ratio for an entry larger than `ratioFloor` bytes. */
  maxRatio: number;
  /** Entries smaller than this are exempt from the ratio check (tiny XML compresses very well). */
  ratioFloor: number;
  /**
   * Most bytes the XML parts may inflate to, together. mammoth holds them as strings and a DOM, with its zip
   * buffers outside the worker's heap limit; on text-dense documents a little past this limit ran the parser out
   * of its heap (docs/ingest.md#parsing), so past it the answer is this limit's clearer message.
   */
  maxXml: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxTotalUncompressed: 200 * 1024 * 1024,
  maxRatio: 100,
  ratioFloor: 1024 * 1024,
  maxXml: 48 * 1024 * 1024,
};

const NOT_DOCX = 'not a Word document (.docx)';

/** Parts the DOCX parser reads itself when mammoth yields nothing (ruby-only text) or skips them (altChunk HTML). */
const KEPT_PART = /^word\/(document\.xml|[^/]+\.x?html?)$/i;

/**
 * Checks the archive against `limits` and returns the kept parts (see KEPT_PART) by name.
 * Throws ParseError for a zip bomb, a damaged archive, or a zip without `word/document.xml`.
 */
export async function checkZip(buffer: Buffer, limits: Partial<ZipLimits> = {}): Promise<Map<string, Buffer>> {
  const l = { ...DEFAULT_ZIP_LIMITS, ...limits };
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
        err || !z ? reject(err ?? new Error('no zip')) : resolve(z),
      ),
    );
  } catch (err) {
    throw new ParseError(`the Word document is damaged or truncated (${reason(err)})`, { cause: err });
  }

  const kept = new Map<string, Buffer>();
  try {
    if (zip.entryCount > l.maxEntries) {
      throw new ParseError(`the Word document has too many parts (${zip.entryCount}) — refused as a possible zip bomb`);
    }
    const xmlParts: yauzl.Entry[] = [];
    let total = 0;
    let xml = 0;
    let hasDocument = false;
    await eachEntry(zip, (entry) => {
      total += entry.uncompressedSize;
      if (total > l.maxTotalUncompressed) {
        throw new ParseError(
          `the Word document would expand to more than ${Math.round(l.maxTotalUncompressed / 1048576)} MB — refused as a possible zip bomb`,
        );
      }
      if (
        entry.uncompressedSize > l.ratioFloor &&
        entry.uncompressedSize / Math.max(1, entry.compressedSize) > l.maxRatio
      ) {
        throw new ParseError('the Word document is compressed suspiciously well — refused as a possible zip bomb');
      }
      if (entry.fileName === 'word/document.xml') hasDocument = true;
      if (/\.(xml|rels|html?|xhtml)$/i.test(entry.fileName)) {
        xmlParts.push(entry);
        xml += entry.uncompressedSize;
        if (xml > l.maxXml) {
          throw new ParseError(
            `the Word document's text parts expand to more than ${Math.round(l.maxXml / 1048576)} MB of XML — too large to parse`,
          );
        }
      }
    });
    if (!hasDocument) throw new ParseError(NOT_DOCX);
    for (const entry of xmlParts) {
      const content = await drain(zip, entry, KEPT_PART.test(entry.fileName));
      if (content) kept.set(entry.fileName, content);
    }
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(`the Word document is damaged or truncated (${reason(err)})`, { cause: err });
  } finally {
    zip.close();
  }
  return kept;
}

function eachEntry(zip: yauzl.ZipFile, onEntry: (entry: yauzl.Entry) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        onEntry(entry);
        zip.readEntry();
      } catch (err) {
        reject(err);
      }
    });
    zip.once('end', () => resolve());
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** Inflates one entry, keeping its bytes only when asked; yauzl errors if it grows past its declared size. */
function drain(zip: yauzl.ZipFile, entry: yauzl.Entry, keep: boolean): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(err ?? new Error(`cannot read ${entry.fileName}`));
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => {
        if (keep) chunks.push(c);
      });
      stream.on('error', reject);
      stream.on('end', () => resolve(keep ? Buffer.concat(chunks) : null));
    });
  });
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/end of central directory/i.test(message)) return 'the zip directory at its end is missing';
  return message.split(/[\n.]/)[0]!.slice(0, 120);
}
