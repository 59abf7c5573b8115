/**
 * A PDF whose page tree is damaged where pdf.js gives up or loses pages: a /Pages node listing itself or an ancestor
 * among its /Kids (pdf.js stops at the first node it meets twice: "Pages tree contains circular reference"), /Kids
 * entries that are not pages (a number, null, a missing object, a /Pages node without a /Kids array: pdf.js stops at
 * those too), a /Count that differs from the pages below it (pdf.js skips whole subtrees by /Count, so one too small
 * loses pages without a word). The tree is walked here the way pdf.js walks it (depth first, kids in order; a node
 * whose /Type is /Page is a page whatever else it carries, and so is one with neither /Type nor /Kids) and each such
 * entry or /Count is blanked, so each page is read once, in order. Nodes stored as plain objects are blanked in place, which keeps the
 * file's offsets and cross-reference table valid; nodes inside a compressed object stream (PDF 1.5 and later; where
 * most writers put the page tree today) cannot be edited so, and get new versions in an incremental update appended
 * to the file, as an editor saves a change. Written here because pdf.js has no way to skip what it cannot use, and a
 * PDF writer would rewrite the whole file to change a few bytes of one array.
 */
import { constants, inflateSync } from 'node:zlib';

export const PAGE_TREE_LOOP = /Pages tree contains circular reference/;
/** What pdf.js says when a page is lost to the page tree. */
export const PAGE_TREE_DAMAGE = /Pages tree contains circular reference|Page dictionary kids? .*(not an array|wrong type)|Page index \d+ not found/;

/** What a repair found and blanked, in the order a person should hear of it. */
export type PageTreeProblem = 'loop' | 'entries' | 'count';

export interface PageTreeRepair {
  bytes: Uint8Array;
  problems: PageTreeProblem[];
}

const OBJECT = /(?<!\d)(\d+)\s+\d+\s+obj\b/g;
/** An object stream inflating past this is left as it is (pdf-stream-guard.ts bounds what pdf.js inflates). */
const MAX_OBJECT_STREAM = 16 * 2 ** 20;

/** An object's text up to its stream, if any: where it starts in the file, or, inside an object stream, `at` 0. */
interface PdfObject {
  num: number;
  at: number;
  dict: string;
  compressed: boolean;
}

/** One PDF value in an object's text, from `start` to `end`. */
interface Value {
  kind: 'dict' | 'array' | 'ref' | 'name' | 'number' | 'other';
  start: number;
  end: number;
}

/** A value where it lives: which object, and where in that object's text. */
interface Located {
  in: PdfObject;
  value: Value;
}

/** A /Pages node being walked: the pages found below it, and its /Count entry when that is a whole number. */
interface Inner {
  pages: number;
  count?: Blank & { says: number };
}

interface Blank {
  in: PdfObject;
  start: number;
  end: number;
}

type Step = { kid: Located; parent: Inner } | { done: Inner; parent?: Inner };

/**
 * `bytes` with every looping, repeated or unusable entry of the page tree and every wrong /Count blanked, or undefined
 * when there is none or none can be.
 */
export function repairPageTree(bytes: Uint8Array): PageTreeRepair | undefined {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = raw.toString('latin1');
  const { objects, unread } = indexObjects(raw, text);
  // Once each: a hostile file can point every node at one large object (its /Type, /Count or /Kids).
  const values = new Map<number, Located | undefined>();
  const valueOf = (num: number): Located | undefined => {
    if (values.has(num)) return values.get(num);
    const object = objects.get(num);
    const value = object && valueAt(object, skipSpace(object.dict, 0));
    const located = object && value && { in: object, value };
    values.set(num, located);
    return located;
  };
  /** `at` itself, or what it refers to. */
  const resolve = (at: Located): Located | undefined => (at.value.kind === 'ref' ? valueOf(refNumber(at)) : at);
  /** pdf.js reads a reference to an object that is not there as null; one in an object stream not read here may be there. */
  const missing = (at: Located): 'unknown' | 'unusable' => (unread && !objects.has(refNumber(at)) ? 'unknown' : 'unusable');

  let root: Located | undefined;
  for (const object of objects.values()) {
    if (!/\/Type\s*\/Catalog\b/.test(object.dict)) continue;
    const catalog = valueOf(object.num);
    const pages = catalog?.value.kind === 'dict' ? entries(catalog).get('/Pages') : undefined;
    if (pages?.value.kind === 'ref') root = pages;
  }
  const rootNode = root && resolve(root);
  if (!root || rootNode?.value.kind !== 'dict') return undefined;

  /** Where `node`'s kids are, or that it is a page, or why its kids cannot be walked. */
  const walkedKids = new Set<number>(); // /Kids arrays stored as objects of their own
  const kidsOf = (node: Located): Located | 'page' | 'repeated' | 'unusable' | 'unknown' => {
    const keys = entries(node);
    const type = keys.get('/Type');
    const kids = keys.get('/Kids');
    const name = nameOf(type && resolve(type));
    // As pdf.js reads it, but a /Pages node without /Kids holds no pages (pdf.js reads it as an empty page).
    if (name === '/Page') return 'page';
    if (!kids) return name === '/Pages' ? 'unusable' : 'page';
    if (kids.value.kind === 'ref') {
      // Two nodes sharing one /Kids array list the same pages twice.
      if (walkedKids.has(refNumber(kids))) return 'repeated';
      walkedKids.add(refNumber(kids));
    }
    const list = resolve(kids);
    if (!list) return missing(kids);
    return list.value.kind === 'array' ? list : 'unusable';
  };

  const blanks: Blank[] = [];
  const counts: Blank[] = [];
  const found = new Set<PageTreeProblem>();
  const blank = (at: Located, problem: PageTreeProblem) => {
    blanks.push({ in: at.in, start: at.value.start, end: at.value.end });
    found.add(problem);
  };
  const stack: Step[] = [];
  /** Queues `node`'s kids under a new inner node of `parent`, last first so the first is walked first. */
  const open = (node: Located, kids: Located, parent?: Inner) => {
    const inner: Inner = { pages: 0 };
    const count = entries(node).get('/Count');
    const says = count && resolve(count);
    if (count && says?.value.kind === 'number') {
      const n = Number(says.in.dict.slice(says.value.start, says.value.end));
      if (Number.isInteger(n)) inner.count = { in: node.in, start: count.key, end: count.value.end, says: n };
    }
    stack.push({ done: inner, parent });
    const list = elements(kids);
    // One push each: a spread of a /Kids of some 500,000 overflows the stack.
    for (let i = list.length - 1; i >= 0; i--) stack.push({ kid: { in: kids.in, value: list[i]! }, parent: inner });
  };
  const rootKids = kidsOf(rootNode);
  if (typeof rootKids === 'string') return undefined;
  open(rootNode, rootKids);

  // pdf.js counts the root as met before any of its kids.
  const reached = new Set<number>([refNumber(root)]);
  let unknown = false; // a node this walk cannot see: the pages below it, and so every /Count above it, are unknown
  while (stack.length) {
    const step = stack.pop()!;
    if ('done' in step) {
      if (step.parent) step.parent.pages += step.done.pages;
      if (step.done.count && step.done.count.says !== step.done.pages) counts.push(step.done.count);
      continue;
    }
    const { kid, parent } = step;
    if (kid.value.kind === 'ref') {
      const num = refNumber(kid);
      if (reached.has(num)) {
        blank(kid, 'loop');
        continue;
      }
      reached.add(num);
    } else if (kid.value.kind !== 'dict') {
      blank(kid, 'entries');
      continue;
    }
    const node = resolve(kid);
    const kids = !node ? missing(kid) : node.value.kind !== 'dict' ? 'unusable' : kidsOf(node);
    if (kids === 'page') parent.pages++;
    else if (kids === 'repeated') blank(kid, 'loop');
    else if (kids === 'unusable') blank(kid, 'entries');
    else if (kids === 'unknown') unknown = true;
    else open(node!, kids, parent);
  }
  if (!unknown && counts.length) {
    for (const count of counts) blanks.push(count);
    found.add('count');
  }
  if (blanks.length === 0) return undefined;

  const out = new Uint8Array(bytes);
  const updated = new Map<number, Buffer>(); // compressed nodes, blanked in a copy each
  for (const b of blanks) {
    if (b.in.compressed && !updated.has(b.in.num)) updated.set(b.in.num, Buffer.from(b.in.dict, 'latin1'));
    (b.in.compressed ? updated.get(b.in.num)! : out).fill(0x20, b.in.at + b.start, b.in.at + b.end);
  }
  const repaired = updated.size ? withUpdate(out, text, updated) : out;
  const order: PageTreeProblem[] = ['loop', 'entries', 'count'];
  return repaired && { bytes: repaired, problems: order.filter((p) => found.has(p)) };
}

/**
 * Each object's text up to its stream, by number, a later definition winning as it does in an incremental update,
 * and whether an object stream could not be read here (the objects in it are then unknown, not missing).
 */
function indexObjects(raw: Buffer, text: string): { objects: Map<number, PdfObject>; unread: boolean } {
  const objects = new Map<number, PdfObject>();
  let unread = false;
  OBJECT.lastIndex = 0;
  for (let m = OBJECT.exec(text); m; m = OBJECT.exec(text)) {
    const at = m.index + m[0].length;
    let end = text.indexOf('endobj', at);
    if (end < 0) end = text.length;
    // Looked for within the object only: a search from it to the next stream anywhere made many small objects quadratic.
    const body = text.slice(at, end);
    const stream = body.indexOf('stream');
    const dict = stream >= 0 ? body.slice(0, stream) : body;
    objects.set(Number(m[1]), { num: Number(m[1]), at, dict, compressed: false });
    if (stream >= 0 && /\/Type\s*\/ObjStm\b/.test(dict)) {
      const held = streamObjects(raw, at + stream, dict);
      if (!held) unread = true;
      for (const [num, object] of held ?? []) objects.set(num, { num, at: 0, dict: object, compressed: true });
    }
    // Stream data, up to this object's end, is not searched for objects: "12 0 obj" in an image or a page's text is none.
    if (stream >= 0) {
      const data = text.indexOf('endstream', at + stream);
      OBJECT.lastIndex = Math.max(OBJECT.lastIndex, Math.min(data < 0 ? end : data, end));
    }
  }
  return { objects, unread };
}

/** The objects an object stream holds, by number, or undefined when its data cannot be read here. */
function streamObjects(raw: Buffer, streamAt: number, dict: string): [number, string][] | undefined {
  const n = Number(/\/N\s+(\d+)/.exec(dict)?.[1]);
  const first = Number(/\/First\s+(\d+)/.exec(dict)?.[1]);
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)?.[1];
  // Flate without a predictor, or no filter: what writers use for object streams.
  if (!Number.isInteger(n) || !Number.isInteger(first) || /\/DecodeParms/.test(dict) || (filter && !/^\[?\s*\/FlateDecode\s*\]?$/.test(filter))) return undefined;
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
    return undefined;
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

// A reader of PDF values, enough to find a dictionary's keys and an array's elements at their top level: strings,
// comments and nested dictionaries and arrays are stepped over, never descended into (a tree 100,000 levels deep in
// one object costs no stack).

const WHITE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITER = /[\s()<>[\]{}/%]/;
const NUMBER = /[+-]?(\d+\.?\d*|\.\d+)/y;
const REF_TAIL = /\s+\d+\s+R(?![^\s()<>[\]{}/%])/y;

function skipSpace(s: string, i: number): number {
  while (i < s.length) {
    if (WHITE.has(s.charCodeAt(i))) i++;
    else if (s[i] === '%') while (i < s.length && s[i] !== '\n' && s[i] !== '\r') i++;
    else break;
  }
  return i;
}

/** The value starting at `i` (no space before it) in `object`, or undefined at the end of its text or of a container. */
function valueAt(object: PdfObject, i: number): Value | undefined {
  const s = object.dict;
  if (i >= s.length || s[i] === ']' || s.startsWith('>>', i)) return undefined;
  const c = s[i]!;
  if (c === '[' || s.startsWith('<<', i)) return { kind: c === '[' ? 'array' : 'dict', start: i, end: containerEnds(object).get(i) ?? s.length };
  if (c === '(') return { kind: 'other', start: i, end: stringEnd(s, i) };
  if (c === '<') return { kind: 'other', start: i, end: hexEnd(s, i) };
  if (c === '/') return { kind: 'name', start: i, end: wordEnd(s, i + 1) };
  NUMBER.lastIndex = i;
  const number = NUMBER.exec(s);
  if (number) {
    const end = i + number[0].length;
    REF_TAIL.lastIndex = end;
    if (/^\d+$/.test(number[0]) && REF_TAIL.test(s)) return { kind: 'ref', start: i, end: REF_TAIL.lastIndex };
    return { kind: 'number', start: i, end };
  }
  return { kind: 'other', start: i, end: Math.max(i + 1, wordEnd(s, i)) };
}

function wordEnd(s: string, i: number): number {
  while (i < s.length && !DELIMITER.test(s[i]!)) i++;
  return i;
}

const ENDS = new WeakMap<PdfObject, Map<number, number>>();

/**
 * Where each dictionary or array of `object` opens, and where it ends (after its `>>` or `]`); one opened and not
 * closed runs to the end of the text. Found in one pass per object: looking for each one's end from its start made a
 * node nested 5,000 deep in a /Kids take seconds.
 */
function containerEnds(object: PdfObject): Map<number, number> {
  let ends = ENDS.get(object);
  if (ends) return ends;
  ends = new Map();
  const s = object.dict;
  const open: number[] = [];
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    const pair = s.startsWith('<<', i) || s.startsWith('>>', i);
    if (c === '(') i = stringEnd(s, i);
    else if (c === '%') i = skipSpace(s, i);
    else if (c === '<' && !pair) i = hexEnd(s, i);
    else {
      i += pair ? 2 : 1;
      if (c === '[' || (c === '<' && pair)) open.push(i - (pair ? 2 : 1));
      else if ((c === ']' || (c === '>' && pair)) && open.length) ends.set(open.pop()!, i);
    }
  }
  ENDS.set(object, ends);
  return ends;
}

function stringEnd(s: string, i: number): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return s.length;
}

function hexEnd(s: string, i: number): number {
  const end = s.indexOf('>', i);
  return end < 0 ? s.length : end + 1;
}

/** The top-level entries of the dictionary `at` points to: each key's value, and where its key starts. */
function entries(at: Located): Map<string, Located & { key: number }> {
  const s = at.in.dict;
  const out = new Map<string, Located & { key: number }>();
  let i = at.value.start + 2;
  for (;;) {
    const key = valueAt(at.in, skipSpace(s, i));
    if (!key) return out;
    i = key.end;
    if (key.kind !== 'name') continue;
    const value = valueAt(at.in, skipSpace(s, i));
    if (!value) return out;
    i = value.end;
    out.set(s.slice(key.start, key.end), { in: at.in, value, key: key.start });
  }
}

/** The elements of the array `at` points to. */
function elements(at: Located): Value[] {
  const s = at.in.dict;
  const out: Value[] = [];
  let i = at.value.start + 1;
  for (let value = valueAt(at.in, skipSpace(s, i)); value; value = valueAt(at.in, skipSpace(s, i))) {
    out.push(value);
    i = value.end;
  }
  return out;
}

function refNumber(at: Located): number {
  return Number(/^\d+/.exec(at.in.dict.slice(at.value.start, at.value.end))![0]);
}

function nameOf(at: Located | undefined): string | undefined {
  return at?.value.kind === 'name' ? at.in.dict.slice(at.value.start, at.value.end) : undefined;
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
