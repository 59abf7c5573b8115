/**
 * Names in the order the SQL stores sort them on both engines (`lower()` of the name under a byte-wise collation:
 * store/sql/dialect.ts `bytewise`): A–Z folded, then by code point. Not localeCompare, whose order is the host's.
 */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(foldAscii(a)), Buffer.from(foldAscii(b)));
}

/** A name with A–Z folded and nothing else: what "any case" means to both engines (SQLite's NOCASE, lower() under "C"). */
export const foldAscii = (name: string): string => name.replace(/[A-Z]/g, (c) => c.toLowerCase());
