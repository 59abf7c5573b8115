/**
 * A search's filters as a LanceDB predicate on the chunks' document fields (chunk-schema.ts DocumentFields), for the
 * prefilter of the vector and keyword searches: every part is answered by a scalar index (bitmaps for types,
 * uploaders and sources, btrees for times and path prefixes, label lists for labels and metadata), so a filter narrows
 * the rows a search reads instead of dropping what it found.
 *
 * Names are resolved before they get here (search/filters.ts): uploaders to user ids, label names to the ids of the
 * labels of that name in the projects searched, metadata ranges to the values in range.
 */
import { META_SEPARATOR } from '../../core/metadata-entries.js';
import { spellings } from '../../core/name-spellings.js';
import { inList, lit } from './owned-table.js';

/** What a document or chunk is when no language could be told (BCP 47's "undetermined"). */
export const UNDETERMINED = 'und';

export type MetaPredicate =
  /** Holds one of these `meta` entries (`key␟value`). */
  | { anyOf: string[] }
  /** Has (`present`) or has not the key. */
  | { key: string; present: boolean };

export interface ChunkFilter {
  contentTypes?: readonly string[];
  /** Uploaded at or after / before (epoch ms). */
  uploadedFrom?: number;
  uploadedBefore?: number;
  pathPrefix?: string;
  /** Uploaders' user ids. */
  userIds?: readonly string[];
  sourceIds?: readonly string[];
  /** Label ids, in groups: a chunk's document carries one of each group's. */
  labelGroups?: readonly (readonly string[])[];
  /** The chunk's own language (lang's `language` column); `und` is a chunk whose language could not be told. */
  languages?: readonly string[];
  meta?: readonly MetaPredicate[];
}

const listLiteral = (values: readonly string[]): string => `[${values.map(lit).join(', ')}]`;

/** `meta` entry of a key and a value's JSON text. */
export const metaEntry = (key: string, value: string): string => `${key}${META_SEPARATOR}${value}`;

/** The predicate, or null when the filter narrows nothing. A part that can match nothing is `false`. */
export function chunkFilterSql(f: ChunkFilter): string | null {
  const parts: string[] = [];
  if (f.contentTypes) parts.push(inList('content_type', f.contentTypes));
  if (f.uploadedFrom !== undefined) parts.push(`uploaded_at >= ${Math.trunc(f.uploadedFrom)}`);
  if (f.uploadedBefore !== undefined) parts.push(`uploaded_at < ${Math.ceil(f.uploadedBefore)}`);
  // Either Unicode spelling, as the document list compares paths (core/name-spellings.ts).
  if (f.pathPrefix !== undefined) parts.push(spellings(f.pathPrefix).map((p) => `starts_with(path, ${lit(p)})`).join(' OR '));
  if (f.userIds) parts.push(inList('user_id', f.userIds));
  if (f.sourceIds) parts.push(inList('source_id', f.sourceIds));
  if (f.languages) {
    const known = f.languages.filter((l) => l !== UNDETERMINED);
    const either = [...(known.length > 0 ? [inList('language', known)] : []), ...(known.length < f.languages.length ? ['language IS NULL'] : [])];
    parts.push(either.join(' OR '));
  }
  for (const group of f.labelGroups ?? []) parts.push(group.length === 0 ? 'false' : `array_has_any(labels, ${listLiteral(group)})`);
  for (const m of f.meta ?? []) {
    if ('anyOf' in m) parts.push(m.anyOf.length === 0 ? 'false' : `array_has_any(meta, ${listLiteral(m.anyOf)})`);
    // A row written before the fields were recorded (null) matches neither: it is not known to lack the key.
    else {
      // The key in either Unicode spelling, as the document list reads it (core/name-spellings.ts).
      const has = spellings(m.key).map((key) => `array_has(meta, ${lit(key)})`);
      parts.push(m.present ? has.join(' OR ') : `(meta IS NOT NULL AND NOT (${has.join(' OR ')}))`);
    }
  }
  return parts.length > 0 ? parts.map((p) => `(${p})`).join(' AND ') : null;
}
