/** Pooling and normalisation shared by providers, so every Embedder returns unit vectors. */

/** Scales `v` to unit length in place; a zero vector stays zero. */
export function l2NormalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

/** Copies `values` into a Float32Array and L2-normalises it. */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  return l2NormalizeInPlace(Float32Array.from(values));
}

/**
 * Mean of the token vectors of row `row` of a [batch, seqLen, dim] hidden state, over the `length`
 * real (unpadded) tokens — what sentence-transformers' mean pooling does with the attention mask.
 */
export function meanPool(
  hidden: Float32Array,
  row: number,
  length: number,
  seqLen: number,
  dim: number,
): Float32Array {
  const out = new Float32Array(dim);
  const base = row * seqLen * dim;
  for (let t = 0; t < length; t++) {
    const off = base + t * dim;
    for (let d = 0; d < dim; d++) out[d] = out[d]! + hidden[off + d]!;
  }
  if (length > 0) for (let d = 0; d < dim; d++) out[d] = out[d]! / length;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
