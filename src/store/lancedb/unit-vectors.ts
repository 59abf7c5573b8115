/**
 * A chunk's answer units as its row's `units` column holds them: each unit's span of the chunk's text, what kind of
 * line it is, and its vector (from the chunk's own model pass: ingest/unit-vectors.ts) quantised to 8 bits with one
 * scale per unit — 4× smaller than float32, and a cosine off by well under 0.01, far below what separates an answer
 * from its neighbours. A search reads it with the row it shows and scores the units by a dot product with the query's
 * vector: no model pass.
 *
 * With them, the chunk's context: the header it was embedded under (its document's title, its heading path), whose
 * words count for every unit when an answer is chosen by the query's terms.
 *
 * Layout, little-endian: u8 format (1), u16 unit count, u16 dimension (0: spans only, for embedders without token
 * states), u16 context bytes and the context in UTF-8, then per unit u32 start, u32 end, u8 kind, and with a dimension
 * f32 scale and that many i8.
 */

/** What a unit is: a sentence (or a run of them), a heading line (never an answer itself), a list item, a table row. */
export const UNIT_KINDS = ['sentence', 'heading', 'item', 'row'] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

export interface UnitSpan {
  /** [start, end) UTF-16 offsets into the chunk's text. */
  start: number;
  end: number;
  kind: UnitKind;
}

export interface StoredUnits {
  units: UnitSpan[];
  /** The header the chunk was embedded under (title, heading path): context for every unit. */
  context: string;
  /** Whether the units have vectors (false: spans only). */
  scored: boolean;
  /** Each unit's cosine to `query` (a unit vector); 0 for a unit without a vector. */
  scores(query: Float32Array): number[];
}

const FORMAT = 1;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
/** Longest context kept (bytes): a header is short; a longer one is cut at a character boundary. */
const MAX_CONTEXT_BYTES = 1024;

export function encodeUnits(units: readonly UnitSpan[], vectors: readonly (Float32Array | null)[] | null, context = ''): Uint8Array {
  const dim = vectors?.find((v) => v !== null)?.length ?? 0;
  const per = 9 + (dim > 0 ? 4 + dim : 0);
  let ctx = utf8.encode(context);
  if (ctx.length > MAX_CONTEXT_BYTES) ctx = utf8.encode(fromUtf8.decode(ctx.subarray(0, MAX_CONTEXT_BYTES)).replace(/\uFFFD$/, ''));
  const head = 7 + ctx.length;
  const out = new Uint8Array(head + units.length * per);
  const view = new DataView(out.buffer);
  view.setUint8(0, FORMAT);
  view.setUint16(1, units.length, true);
  view.setUint16(3, dim, true);
  view.setUint16(5, ctx.length, true);
  out.set(ctx, 7);
  units.forEach((u, i) => {
    const at = head + i * per;
    view.setUint32(at, u.start, true);
    view.setUint32(at + 4, u.end, true);
    view.setUint8(at + 8, UNIT_KINDS.indexOf(u.kind));
    if (dim === 0) return;
    const v = vectors![i];
    let max = 0;
    if (v) for (let k = 0; k < dim; k++) max = Math.max(max, Math.abs(v[k]!));
    const scale = max / 127;
    view.setFloat32(at + 9, scale, true);
    if (!v || scale === 0) return;
    const q = new Int8Array(out.buffer, at + 13, dim);
    for (let k = 0; k < dim; k++) q[k] = Math.round(v[k]! / scale);
  });
  return out;
}

/** The stored units, or null for a value of another format (a newer release's: the row is treated as without units). */
export function decodeUnits(blob: Uint8Array): StoredUnits | null {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.byteLength < 7 || view.getUint8(0) !== FORMAT) return null;
  const count = view.getUint16(1, true);
  const dim = view.getUint16(3, true);
  const head = 7 + view.getUint16(5, true);
  const per = 9 + (dim > 0 ? 4 + dim : 0);
  if (blob.byteLength !== head + count * per) return null;
  const units: UnitSpan[] = [];
  for (let i = 0; i < count; i++) {
    const at = head + i * per;
    units.push({ start: view.getUint32(at, true), end: view.getUint32(at + 4, true), kind: UNIT_KINDS[view.getUint8(at + 8)] ?? 'sentence' });
  }
  return {
    units,
    context: fromUtf8.decode(blob.subarray(7, head)),
    scored: dim > 0,
    scores(query) {
      if (dim === 0 || query.length !== dim) return units.map(() => 0);
      return units.map((_, i) => {
        const at = head + i * per;
        const scale = view.getFloat32(at + 9, true);
        const q = new Int8Array(blob.buffer, blob.byteOffset + at + 13, dim);
        let sum = 0;
        for (let k = 0; k < dim; k++) sum += q[k]! * query[k]!;
        return sum * scale;
      });
    },
  };
}
