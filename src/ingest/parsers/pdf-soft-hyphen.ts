/**
 * Hyphens drawn with a glyph that the font's ToUnicode map calls U+00AD (soft hyphen). pdf.js's getTextContent
 * skips every format character (\p{Cf}) without a trace, so "self-employed" drawn that way reads
 * "selfemployed", and no getTextContent option changes that. Only the operator list shows the glyph, at more
 * than the cost of reading every page a second time.
 *
 * Instead, pdf.js's private copy of the file gets an incremental update (the PDF's own way to change objects):
 * each ToUnicode CMap with an entry that maps one code to U+00AD is written again after the end of the file,
 * uncompressed, mapping that code to MARK (a noncharacter, never real text) instead, with an xref section and
 * trailer that point to it. pdf.js keeps MARK like any character and advances by the glyph's width.
 */
import { constants, inflateSync } from 'node:zlib';

/** What a drawn U+00AD glyph reads as in pdf.js's text: U+FDD0, a noncharacter. */
export const MARK = '\ufdd0';

/** ToUnicode CMaps are small; a larger stream is a content, font or image stream. */
const MAX_CMAP_BYTES = 1 << 20;
const STREAM_START = /stream\r?\n/g;
const FILTER = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/;
const LENGTH = /\/Length\s+(\d+)(\s+\d+\s+R)?/;
/**
 * A destination of exactly U+00AD: in a bfchar pair ("<0010> <00AD>"), a one-code bfrange ("<0010> <0010>
 * <00AD>") or a bfrange's array. A range that starts at U+00AD and spans several codes is left alone (its
 * other codes follow from that start).
 */
const SOFT_HYPHEN_DEST = /<00ad>/gi;
const HAS_SOFT_HYPHEN_DEST = /<00ad>/i;

/**
 * pdf.js's copy of `bytes`: the same bytes, plus an update that remaps drawn soft hyphens when some CMap has
 * them. Encrypted files (whose streams cannot be read here) and files without such a CMap come back as a
 * plain copy.
 */
export function markSoftHyphens(bytes: Uint8Array): Uint8Array {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = raw.toString('latin1');
  if (!text.includes('stream') || /\/Encrypt\b/.test(text)) return new Uint8Array(bytes);
  const objects: { num: string; gen: string; cmap: string }[] = [];
  for (const m of text.matchAll(STREAM_START)) {
    const at = m.index;
    if (text.startsWith('end', at - 3)) continue;
    const window = text.slice(Math.max(0, at - 512), at);
    const objAt = window.lastIndexOf('obj');
    // The stream's own "N G obj", right before its dictionary.
    const head = objAt < 0 ? null : /(\d+)\s+(\d+)\s+$/.exec(window.slice(0, objAt));
    const dict = window.slice(objAt + 3).trimStart();
    if (!head || !dict.startsWith('<<')) continue;
    // A ToUnicode CMap's dictionary has a length and maybe a filter, nothing that marks another kind of stream.
    if (/\/(Subtype|Type|Length1|DecodeParms|DP)\b/.test(dict)) continue;
    const start = at + m[0].length;
    const length = streamLength(dict, text, start);
    if (length === undefined || length > MAX_CMAP_BYTES || start + length > raw.length) continue;
    const cmap = readCMap(raw.subarray(start, start + length), FILTER.exec(dict)?.[1]);
    if (!cmap || !cmap.includes('beginbf') || !HAS_SOFT_HYPHEN_DEST.test(cmap)) continue;
    const marked = remap(cmap);
    if (marked !== cmap) objects.push({ num: head[1]!, gen: head[2]!, cmap: marked });
  }
  const prev = /startxref\s+(\d+)\s*%%EOF\s*$/.exec(text.slice(-1024))?.[1];
  const root = [...text.matchAll(/\/Root\s+(\d+\s+\d+\s+R)/g)].pop()?.[1];
  if (!objects.length || !prev || !root) return new Uint8Array(bytes);
  const info = [...text.matchAll(/\/Info\s+(\d+\s+\d+\s+R)/g)].pop()?.[1];
  // Folded, not spread: a file can hold any number of either.
  let size = 0;
  for (const s of text.matchAll(/\/Size\s+(\d+)/g)) size = Math.max(size, Number(s[1]));
  for (const o of objects) size = Math.max(size, Number(o.num) + 1);

  let update = '\n';
  const offsets: number[] = [];
  for (const o of objects) {
    offsets.push(raw.length + update.length);
    update += `${o.num} ${o.gen} obj\n<< /Length ${o.cmap.length} >>\nstream\n${o.cmap}\nendstream\nendobj\n`;
  }
  const xref = raw.length + update.length;
  update += 'xref\n';
  objects.forEach((o, i) => {
    update += `${o.num} 1\n${String(offsets[i]).padStart(10, '0')} ${o.gen.padStart(5, '0')} n\r\n`;
  });
  update += `trailer\n<< /Size ${size} /Root ${root}${info ? ` /Info ${info}` : ''} /Prev ${prev} >>\nstartxref\n${xref}\n%%EOF\n`;
  const out = new Uint8Array(raw.length + update.length);
  out.set(raw);
  Buffer.from(out.buffer).write(update, raw.length, 'latin1');
  return out;
}

/** Turns MARK back into text: a hyphen inside a word, nothing elsewhere (at a run's end, before a space). */
export function unmarkSoftHyphens(str: string): string {
  if (!str.includes(MARK)) return str;
  return str.replace(/\ufdd0+/g, (run: string, at: number) => {
    const before = str[at - 1];
    const after = str[at + run.length];
    // Beside a space or at either end of the run it may be a line-end break hint; the joiner judges those.
    return before && after && /\S/.test(before) && /[\p{L}\p{N}]/u.test(after) ? '-' : '';
  });
}

/** The stream's declared length: a direct number, or the indirect object it points to. */
function streamLength(dict: string, text: string, start: number): number | undefined {
  const m = LENGTH.exec(dict);
  if (!m) return undefined;
  if (!m[2]) return Number(m[1]);
  const ref = /\s+(\d+)\s+R/.exec(m[2]);
  if (!ref) return undefined;
  const obj = new RegExp(`(?:^|[\\r\\n\\s])${m[1]}\\s+${ref[1]}\\s+obj\\s*(\\d+)\\s*endobj`).exec(text);
  if (obj) return Number(obj[1]);
  // The length object is in an object stream (or missing): find "endstream" instead.
  const end = text.indexOf('endstream', start);
  if (end < 0) return undefined;
  let e = end;
  while (e > start && (text[e - 1] === '\n' || text[e - 1] === '\r')) e--;
  return e - start;
}

/** "<00AD>" → "<FDD0>" in the entries that map one code to it; same length, so the text changes in place. */
function remap(cmap: string): string {
  return cmap.replace(/(beginbf(?:char|range))([\s\S]*?)(endbf(?:char|range))/g, (_all, begin: string, body: string, end: string) => {
    if (begin === 'beginbfchar') return begin + body.replace(SOFT_HYPHEN_DEST, '<FDD0>') + end;
    return begin + body.replace(/<([0-9a-f]+)>\s*<([0-9a-f]+)>\s*(<00ad>|\[[^\]]*\])/gi, (entry: string, lo: string, hi: string, dest: string) => {
      if (dest.startsWith('[')) return entry.replace(SOFT_HYPHEN_DEST, '<FDD0>');
      return parseInt(lo, 16) === parseInt(hi, 16) ? entry.replace(SOFT_HYPHEN_DEST, '<FDD0>') : entry;
    }) + end;
  });
}

/**
 * The stream's text when it is plain or deflated and starts like a CMap; a peek at its first bytes rejects
 * content streams without inflating them whole.
 */
function readCMap(span: Buffer, filter: string | undefined): string | undefined {
  if (!filter) return LOOKS_LIKE_CMAP.test(span.subarray(0, 512).toString('latin1')) ? span.toString('latin1') : undefined;
  if (!/^\[?\s*\/(FlateDecode|Fl)\s*\]?$/.test(filter)) return undefined;
  try {
    const peek = inflateSync(span.subarray(0, 256), { finishFlush: constants.Z_SYNC_FLUSH });
    if (!LOOKS_LIKE_CMAP.test(peek.toString('latin1'))) return undefined;
    return inflateSync(span, { maxOutputLength: 4 * MAX_CMAP_BYTES, finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
  } catch {
    return undefined;
  }
}

const LOOKS_LIKE_CMAP = /CIDInit|begincmap|CMapName/;
