/**
 * A PDF whose page tree loops (a /Pages node listing itself or an ancestor among its /Kids): pdf.js stops at the
 * first node it meets twice, and every page after it, or before it in the file's order, failed with "Pages tree
 * contains circular reference". The tree is walked here the way pdf.js walks it (depth first, kids in order) and
 * every reference to a node already reached is blanked, so each page is read once, in order. Nodes stored as plain
 * objects are blanked in place, which keeps the file's offsets and cross-reference table valid; nodes inside a
 * compressed object stream (PDF 1.5 and later; where most writers put the page tree today) cannot be edited so, and
 * get new versions in an incremental update appended to the file, as an editor saves a change. Written here because
 * pdf.js has no way to skip a node it met before, and a PDF writer would rewrite the whole file to change a few
 * bytes of one array.
 */
import { constants, inflateSync } from 'node:zlib';

export const PAGE_TREE_LOOP = /Pages tree contains circular reference/;

const OBJECT = /(?<!\d)(\d+)\s+\d+\s+obj\b/g;
const REF = /(\d+)\s+(\d+)\s+R\b/g;
/** An object stream inflating past this is left as it is (pdf-stream-guard.ts bounds what pdf.js inflates). */
const MAX_OBJECT_STREAM = 16 * 2 ** 20;

/** An object's dictionary: where it starts in the file, or, inside an object stream, its whole text (`at` 0). */
interface PdfObject {
  num: number;
  at: number;
  dict: string;
  compressed: boolean;
}

/** `bytes` with every looping or repeated reference of the page tree blanked, or undefined when none can be. */
export function cutPageTreeLoops(bytes: Uint8Array): Uint8Array | undefined {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = raw.toString('latin1');
  // Each object's dictionary; a later definition wins, as it does in an incremental update.
  const objects = new Map<number, PdfObject>();
  for (const m of text.matchAll(OBJECT)) {
    const at = m.index + m[0].length;
    let end = text.indexOf('endobj', at);
    if (end < 0) end = text.length;
    // Looked for within the object only: a search from it to the next stream anywhere made many small objects quadratic.
    const body = text.slice(at, end);
    const stream = body.indexOf('stream');
    const dict = stream >= 0 ? body.slice(0, stream) : body;
    objects.set(Number(m[1]), { num: Number(m[1]), at, dict, compressed: false });
    if (stream >= 0 && /\/Type\s*\/ObjStm\b/.test(dict)) {
      for (const [num, object] of streamObjects(raw, at + stream, dict)) objects.set(num, { num, at: 0, dict: object, compressed: true });
    }
  }
  let root: number | undefined;
  for (const { dict } of objects.values()) {
    if (/\/Type\s*\/Catalog\b/.test(dict)) root = Number(/\/Pages\s+(\d+)\s+\d+\s+R\b/.exec(dict)?.[1] ?? NaN);
  }
  if (root === undefined || !Number.isInteger(root)) return undefined;

  const blanks: { in: PdfObject; at: number; length: number }[] = [];
  const reached = new Set<number>();
  const stack: { num: number; in?: PdfObject; at: number; length: number }[] = [{ num: root, at: -1, length: 0 }];
  while (stack.length) {
    const ref = stack.pop()!;
    if (reached.has(ref.num)) {
      blanks.push({ in: ref.in!, at: ref.at, length: ref.length });
      continue;
    }
    reached.add(ref.num);
    const node = objects.get(ref.num);
    const kids = node && /\/Kids\s*\[([^\]]*)\]/.exec(node.dict);
    if (!node || !kids) continue;
    const start = node.at + kids.index + kids[0].indexOf('[') + 1;
    const refs = [...kids[1]!.matchAll(REF)];
    // Last kid first, so the first is walked first; one push each: a spread of a /Kids of some 500,000 overflows the stack.
    for (let i = refs.length - 1; i >= 0; i--) stack.push({ num: Number(refs[i]![1]), in: node, at: start + refs[i]!.index, length: refs[i]![0].length });
  }
  if (blanks.length === 0) return undefined;
  const out = new Uint8Array(bytes);
  const updated = new Map<number, Buffer>(); // compressed nodes, blanked in a copy each
  for (const blank of blanks) {
    if (blank.in.compressed && !updated.has(blank.in.num)) updated.set(blank.in.num, Buffer.from(blank.in.dict, 'latin1'));
    (blank.in.compressed ? updated.get(blank.in.num)! : out).fill(0x20, blank.at, blank.at + blank.length);
  }
  return updated.size ? withUpdate(out, text, updated) : out;
}

/** The objects an object stream holds, by number, or none when its data cannot be read here. */
function streamObjects(raw: Buffer, streamAt: number, dict: string): [number, string][] {
  const n = Number(/\/N\s+(\d+)/.exec(dict)?.[1]);
  const first = Number(/\/First\s+(\d+)/.exec(dict)?.[1]);
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)?.[1];
  // Flate without a predictor, or no filter: what writers use for object streams.
  if (!Number.isInteger(n) || !Number.isInteger(first) || /\/DecodeParms/.test(dict) || (filter && !/^\[?\s*\/FlateDecode\s*\]?$/.test(filter))) return [];
  let start = streamAt + 'stream'.length;
  if (raw[start] === 0x0d) start++;
  if (raw[start] === 0x0a) start++;
  const length = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict)?.[1];
  const end = length !== undefined ? start + Number(length) : raw.indexOf('endstream', start, 'latin1');
  let data: string;
  try {
    const stored = raw.subarray(start, end < start ? raw.length : end);
    data = (filter ? inflateSync(stored, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_OBJECT_STREAM }) : stored).toString('latin1');
  } catch {
    return [];
  }
  const header = data.slice(0, first).trim().split(/\s+/).map(Number);
  const out: [number, string][] = [];
  for (let i = 0; i < n && 2 * i + 1 < header.length; i++) {
    const from = first + header[2 * i + 1]!;
    const to = 2 * i + 3 < header.length ? first + header[2 * i + 3]! : data.length;
    out.push([header[2 * i]!, data.slice(from, to)]);
  }
  return out;
}

/**
 * `bytes` with `objects` in new versions after them, behind a cross-reference section of their own that points back
 * to the file's last one, or undefined when the file's last trailer cannot be found.
 */
function withUpdate(bytes: Uint8Array, text: string, objects: Map<number, Buffer>): Uint8Array | undefined {
  const prev = /startxref\s+(\d+)\s*%%EOF\s*$/.exec(text.slice(-1024))?.[1];
  if (prev === undefined) return undefined;
  // The last trailer: a classic one after the table at `prev`, or the dictionary of the cross-reference stream there.
  const at = Number(prev);
  const trailer = text.startsWith('xref', at) ? (/trailer\s*<<([\s\S]*?)startxref/.exec(text.slice(at))?.[1] ?? '') : text.slice(at, text.indexOf('stream', at));
  const size = Number(/\/Size\s+(\d+)/.exec(trailer)?.[1]);
  const rootRef = /\/Root\s+\d+\s+\d+\s+R/.exec(trailer)?.[0];
  if (!rootRef || !Number.isInteger(size)) return undefined;
  const info = /\/Info\s+\d+\s+\d+\s+R/.exec(trailer)?.[0] ?? '';
  let body = text.endsWith('\n') ? '' : '\n';
  let xref = 'xref\n';
  for (const [num, object] of objects) {
    xref += `${num} 1\n${String(bytes.length + body.length).padStart(10, '0')} 00000 n \n`;
    body += `${num} 0 obj\n${object.toString('latin1')}\nendobj\n`;
  }
  let newSize = size;
  for (const num of objects.keys()) newSize = Math.max(newSize, num + 1);
  const update = `${body}${xref}trailer\n<< /Size ${newSize} ${rootRef} ${info} /Prev ${prev} >>\nstartxref\n${bytes.length + body.length}\n%%EOF\n`;
  return Buffer.concat([bytes, Buffer.from(update, 'latin1')]);
}
