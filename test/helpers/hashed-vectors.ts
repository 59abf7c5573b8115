/**
 * Vectors for a stand-in of a remote embedding server in tests (not a product path): each word hashed into one of
 * `dim` buckets, counted, normalised, so texts sharing words are near.
 */
export function hashedVector(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let h = 0;
    for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    v[h % dim]! += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
