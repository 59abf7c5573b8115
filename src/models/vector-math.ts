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

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
