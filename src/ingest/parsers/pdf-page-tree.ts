/**
 * A PDF whose page tree loops (a /Pages node listing itself or an ancestor among its /Kids): pdf.js stops at the
 * first node it meets twice, and every page after it, or before it in the file's order, failed with "Pages tree
 * contains circular reference". The tree is walked here the way pdf.js walks it (depth first, kids in order) and
 * every reference to a node already reached is blanked in place, so each page is read once, in order, and the
 * file's offsets and cross-reference table stay valid. Only tree nodes stored as plain objects can be edited so;
 * nodes inside a compressed object stream are left as they are. Written here because pdf.js has no way to skip a
 * node it met before, and a PDF writer would rewrite the whole file to change a few bytes of one array.
 */

export const PAGE_TREE_LOOP = /Pages tree contains circular reference/;

const OBJECT = /(?<!\d)(\d+)\s+\d+\s+obj\b/g;
const REF = /(\d+)\s+(\d+)\s+R\b/g;

/** `bytes` with every looping or repeated reference of the page tree blanked, or undefined when none can be. */
export function cutPageTreeLoops(bytes: Uint8Array): Uint8Array | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  // Each object's dictionary; a later definition wins, as it does in an incremental update.
  const dicts = new Map<number, { at: number; dict: string }>();
  for (const m of text.matchAll(OBJECT)) {
    const at = m.index + m[0].length;
    let end = text.indexOf('endobj', at);
    if (end < 0) end = text.length;
    // Looked for within the object only: a search from it to the next stream anywhere made many small objects quadratic.
    const body = text.slice(at, end);
    const stream = body.indexOf('stream');
    dicts.set(Number(m[1]), { at, dict: stream >= 0 ? body.slice(0, stream) : body });
  }
  let root: number | undefined;
  for (const { dict } of dicts.values()) {
    if (/\/Type\s*\/Catalog\b/.test(dict)) root = Number(/\/Pages\s+(\d+)\s+\d+\s+R\b/.exec(dict)?.[1] ?? NaN);
  }
  if (root === undefined || !Number.isInteger(root)) return undefined;

  const blanks: [at: number, length: number][] = [];
  const reached = new Set<number>();
  const stack: { num: number; at: number; length: number }[] = [{ num: root, at: -1, length: 0 }];
  while (stack.length) {
    const { num, at, length } = stack.pop()!;
    if (reached.has(num)) {
      blanks.push([at, length]);
      continue;
    }
    reached.add(num);
    const node = dicts.get(num);
    const kids = node && /\/Kids\s*\[([^\]]*)\]/.exec(node.dict);
    if (!node || !kids) continue;
    const start = node.at + kids.index + kids[0].indexOf('[') + 1;
    const refs = [...kids[1]!.matchAll(REF)].map((r) => ({ num: Number(r[1]), at: start + r.index, length: r[0].length }));
    stack.push(...refs.reverse());
  }
  if (blanks.length === 0) return undefined;
  const out = new Uint8Array(bytes);
  for (const [at, length] of blanks) out.fill(0x20, at, at + length);
  return out;
}
