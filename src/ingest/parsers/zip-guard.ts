/**
 * Zip-bomb guard for every ZIP-based format (DOCX, PPTX, XLSX, ODF, EPUB), run before any parser sees the
 * archive. The limits are checked here on the central directory, and the XML parts are inflated once through
 * yauzl, which stops a stream that grows past its declared size. The parts a parser reads are handed back
 * inflated, so the parsers never open the ZIP themselves — except mammoth (DOCX), whose JSZip inflates any part a
 * relationship names, whatever its extension, and checks its size only once it is all in memory: for that format
 * (`inflatesItself`) every entry is inflated here first. Messages name the format ("the EPUB is damaged or
 * truncated (…)").
 */
import yauzl from 'yauzl';
import { cutChars } from '../../core/code-points.js';
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

export interface ZipFormat {
  /** How messages name the file: "the Word document", "the EPUB". */
  noun: string;
  /** Parts handed back inflated, by name. */
  keep: RegExp;
  /**
   * The parser opens the archive again with a library that trusts each entry's declared size (mammoth's JSZip):
   * every entry, not only the XML parts, is proven to inflate to no more than it declares.
   */
  inflatesItself?: boolean;
}

export interface ZipContents {
  /** The kept parts (see ZipFormat.keep) by name. */
  parts: Map<string, Buffer>;
  /** Every entry's name. */
  names: Set<string>;
}

/** Checks the archive against `limits` and returns its kept parts. Throws ParseError for a zip bomb or a damaged archive. */
export async function readZip(buffer: Buffer, format: ZipFormat, limits: Partial<ZipLimits> = {}): Promise<ZipContents> {
  const l = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const noun = format.noun;
  const Noun = noun[0]!.toUpperCase() + noun.slice(1);
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
        err || !z ? reject(err ?? new Error('no zip')) : resolve(z),
      ),
    );
  } catch (err) {
    throw new ParseError(`${noun} is damaged or truncated (${reason(err)})`, { cause: err });
  }

  const kept = new Map<string, Buffer>();
  const names = new Set<string>();
  try {
    if (zip.entryCount > l.maxEntries) {
      throw new ParseError(`${Noun} has too many parts (${zip.entryCount}) — refused as a possible zip bomb`);
    }
    const inflated: yauzl.Entry[] = [];
    let total = 0;
    let xml = 0;
    await eachEntry(zip, (entry) => {
      // yauzl cannot read such an entry, and its refusal would read as damage ("entry is encrypted, and options").
      if (entry.isEncrypted()) {
        throw new ParseError(`${noun} is locked with a password (its parts are encrypted) — not supported: upload a copy saved without the password`);
      }
      total += entry.uncompressedSize;
      if (total > l.maxTotalUncompressed) {
        throw new ParseError(
          `${Noun} would expand to more than ${Math.round(l.maxTotalUncompressed / 1048576)} MB — refused as a possible zip bomb`,
        );
      }
      if (
        entry.uncompressedSize > l.ratioFloor &&
        entry.uncompressedSize / Math.max(1, entry.compressedSize) > l.maxRatio
      ) {
        throw new ParseError(`${Noun} is compressed suspiciously well — refused as a possible zip bomb`);
      }
      names.add(entry.fileName);
      const isXml = /\.(xml|rels|html?|xhtml|opf|ncx)$/i.test(entry.fileName);
      if (isXml || format.inflatesItself) inflated.push(entry);
      if (isXml) {
        xml += entry.uncompressedSize;
        if (xml > l.maxXml) {
          throw new ParseError(
            `${Noun}'s text parts expand to more than ${Math.round(l.maxXml / 1048576)} MB of XML — too large to parse`,
          );
        }
      }
    });
    for (const entry of inflated) {
      const content = await drain(zip, entry, format.keep.test(entry.fileName));
      if (content) kept.set(entry.fileName, content);
    }
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(`${noun} is damaged or truncated (${reason(err)})`, { cause: err });
  } finally {
    zip.close();
  }
  return { parts: kept, names };
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
  if (/too many bytes in the stream/i.test(message)) return 'a part inflates past the size the archive gives it — a possible zip bomb';
  return cutChars(message.split(/[\n.]/)[0]!, 120);
}
