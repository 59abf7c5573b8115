/**
 * A document's metadata as filters see it (core/filters.ts): flat entries, one per dotted key and scalar value.
 * The documents' metadata table (SQL, for lists and facets) and the chunks' `meta` column (LanceDB, for search)
 * are both written from these, so a filter means the same in either.
 *
 * - Nested objects are keys joined by dots (`{"email": {"from": …}}` → `email.from`); every key and each of its
 *   prefixes exists (`$exists`).
 * - An array holds each of its values under its key (`{"tags": ["a", "b"]}` equals "a" and equals "b").
 * - A value is compared by its JSON text (`"ops"`, `2020`, `true`); a number also by its value, and a string that
 *   is a date or RFC 3339 time also by its moment, for ranges. Values longer than MAX_METADATA_VALUE_CHARS exist but
 *   are not compared.
 */
import { canonicalValue, MAX_METADATA_KEY_CHARS, MAX_METADATA_VALUE_CHARS, type Scalar } from './filters.js';
import { MOMENT, momentOf } from './moment.js';

export interface MetadataEntry {
  key: string;
  /** The value's JSON text, or null for a key that holds an object or a value too long to compare. */
  value: string | null;
  /** A number value's value. */
  number: number | null;
  /** A date or time value's epoch milliseconds. */
  moment: number | null;
}

/** Entries kept per document at most (a document's metadata is small; this bounds a hostile one). */
export const MAX_METADATA_ENTRIES = 500;
const MAX_DEPTH = 8;
const BAD_PART = /[.\u0000-\u001f\u007f]/;

/** The separator of a key and its value in the chunks' `meta` list: a character no key may hold. */
export const META_SEPARATOR = '\u001f';

/** The flat entries of a document's metadata: each key once with a null value (it exists), and each compared value. */
export function metadataEntries(metadata: Record<string, unknown>): MetadataEntry[] {
  const values: MetadataEntry[] = [];
  const keys = new Set<string>();
  const seen = new Set<string>();
  const add = (key: string, v: Scalar) => {
    if (typeof v === 'string' && v.length > MAX_METADATA_VALUE_CHARS) return;
    const value = canonicalValue(v);
    if (seen.has(`${key}${META_SEPARATOR}${value}`)) return;
    seen.add(`${key}${META_SEPARATOR}${value}`);
    const moment = typeof v === 'string' && MOMENT.test(v) ? momentOf(v) : null;
    values.push({ key, value, number: typeof v === 'number' ? v : null, moment });
  };
  const walk = (key: string, v: unknown, depth: number) => {
    if (keys.size + values.length >= MAX_METADATA_ENTRIES || depth > MAX_DEPTH) return;
    if (Array.isArray(v)) {
      for (const item of v) walk(key, item, depth + 1);
      return;
    }
    if (key) keys.add(key);
    if (v !== null && typeof v === 'object') {
      for (const [part, child] of Object.entries(v)) {
        if (part === '' || BAD_PART.test(part)) continue;
        const path = key ? `${key}.${part}` : part;
        if (path.length <= MAX_METADATA_KEY_CHARS) walk(path, child, depth + 1);
      }
    } else if (key && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null)) {
      if (typeof v !== 'number' || Number.isFinite(v)) add(key, v);
    }
  };
  walk('', metadata, 0);
  return [...[...keys].map((key) => ({ key, value: null, number: null, moment: null })), ...values];
}

/** The chunks' `meta` list of a document: each key alone, and `key␟value` for each compared value. */
export function metaList(entries: readonly MetadataEntry[]): string[] {
  return entries.map((e) => (e.value === null ? e.key : `${e.key}${META_SEPARATOR}${e.value}`));
}
