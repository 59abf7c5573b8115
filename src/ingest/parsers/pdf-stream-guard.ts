/**
 * Decompression-bomb check before pdf.js sees a PDF. pdf.js inflates a content, font or object stream into one
 * growing ArrayBuffer, and ArrayBuffers sit outside the parse worker's V8 heap limit: a 1 MB file of
 * FlateDecode streams can expand to gigabytes of process memory. Image streams are skipped (text extraction
 * never decodes them); every other stream whose filters start with FlateDecode is inflated here, with zlib's
 * own output cap, and the file is refused when one stream or all of them together expand past the limits.
 * Streams behind other first filters (ASCII85, LZW) or encryption are not measured.
 */
import { constants, inflateSync } from 'node:zlib';
import { ParseError } from './errors.js';

export interface StreamLimits {
  /** Largest inflated size of one stream (default 96 MiB). */
  perStream: number;
  /** Largest inflated size of all measured streams together (default 768 MiB). */
  total: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perStream: 96 * 2 ** 20, total: 768 * 2 ** 20 };

const STREAM_START = /stream\r?\n/g;
const FILTER = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/;

export function checkStreams(bytes: Uint8Array, limits: StreamLimits = DEFAULT_STREAM_LIMITS): void {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = raw.toString('latin1');
  let total = 0;
  for (const m of text.matchAll(STREAM_START)) {
    const at = m.index;
    if (text.startsWith('end', at - 3)) continue;
    const objStart = text.lastIndexOf(' obj', at);
    const dict = text.slice(objStart < 0 || at - objStart > 4096 ? Math.max(0, at - 4096) : objStart, at);
    if (/\/Subtype\s*\/Image\b/.test(dict)) continue;
    const flates = leadingFlates(dict);
    if (!flates) continue;
    const start = at + m[0].length;
    const end = text.indexOf('endstream', start);
    const size = inflatedSize(raw.subarray(start, end < 0 ? raw.length : end), flates, Math.min(limits.perStream, limits.total - total) + 1);
    if (size > limits.perStream || total + size > limits.total) throw bomb(limits);
    total += size;
  }
}

/** How many FlateDecode filters the stream's filter chain starts with. */
function leadingFlates(dict: string): number {
  const filter = FILTER.exec(dict)?.[1];
  if (!filter) return 0;
  const names = filter.match(/\/[A-Za-z0-9]+/g) ?? [];
  let n = 0;
  for (const name of names) {
    if (name !== '/FlateDecode' && name !== '/Fl') break;
    n++;
  }
  return n;
}

/** Inflated size of `data` through `levels` FlateDecode filters, at most `cap` (more reads as `cap`). */
function inflatedSize(data: Buffer, levels: number, cap: number): number {
  let current = data;
  for (let i = 0; i < levels; i++) {
    try {
      current = inflateSync(current, { maxOutputLength: Math.max(1, cap), finishFlush: constants.Z_SYNC_FLUSH });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return cap;
      // Damaged data: pdf.js will stop where zlib stops, so what came out so far is all it can expand to.
      return i === 0 ? 0 : current.length;
    }
  }
  return current.length;
}

function bomb(limits: StreamLimits): ParseError {
  const mb = Math.round(limits.perStream / 2 ** 20);
  return new ParseError(`the PDF's compressed streams expand to more than ${mb} MB (a decompression bomb?) — not parsed`);
}
