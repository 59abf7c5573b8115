import { distance } from 'fastest-levenshtein';
import { lowerKey } from '../core/name-spellings.js';
import { type Library, LibraryError, type WireDocument } from './library.js';
import { MAX_LIST_LIMIT } from './limits.js';

/** Names offered when none matches. */
const SUGGESTIONS = 5;
/** Words of the name asked for (list_documents' `filename` filter) to find near names: the longest few. */
const PROBE_WORDS = 4;

const label = (d: WireDocument) => `"${d.path ?? d.filename}" (${d.id})`;

/**
 * The caller's one document named `filename`, or uploaded from `path` (list_documents' filters), as qmd's `get`
 * finds a file by name. None: a tool error offering the nearest names (by edit distance, among the documents that
 * share a word with it and the first listed); several: a tool error listing them, so the model picks an id.
 */
export async function findDocument(library: Library, by: { filename: string } | { path: string }): Promise<WireDocument> {
  const wanted = 'filename' in by ? by.filename : by.path;
  const key = (d: WireDocument) => ('filename' in by ? d.filename : (d.path ?? ''));
  // The list's `filename` matches part of a name, so the one named exactly can be on any page: all are read.
  const named: WireDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await library.listDocuments({ limit: MAX_LIST_LIMIT, ...('filename' in by ? { filename: by.filename } : { path: by.path }), ...(cursor ? { cursor } : {}) });
    // Either Unicode spelling (core/name-spellings.ts): a Mac's upload keeps its paths decomposed, a model writes composed.
    named.push(...page.documents.filter((d) => lowerKey(key(d)) === lowerKey(wanted)));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  let found = named.filter((d) => key(d).normalize('NFC') === wanted.normalize('NFC'));
  if (found.length === 0) found = named;
  if (found.length === 1) return found[0]!;
  const what = 'filename' in by ? `named "${wanted}"` : `uploaded from "${wanted}"`;
  if (found.length > 1) {
    throw new LibraryError(409, 'ambiguous', `${found.length} documents are ${what}: ${found.slice(0, 10).map(label).join(', ')}; pass the one you mean as document_id`);
  }
  const near = await nearest(library, wanted, key);
  throw new LibraryError(
    404,
    'not_found',
    near.length ? `no document ${what}; the nearest: ${near.map(label).join(', ')}` : `no document ${what}, nor any with a similar name: list_documents shows what there is`,
  );
}

async function nearest(library: Library, wanted: string, key: (d: WireDocument) => string): Promise<WireDocument[]> {
  const words = [...new Set(wanted.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3))].sort((a, b) => b.length - a.length).slice(0, PROBE_WORDS);
  const candidates = new Map<string, WireDocument>();
  for (const filename of words) {
    for (const d of (await library.listDocuments({ limit: MAX_LIST_LIMIT, filename })).documents) candidates.set(d.id, d);
  }
  if (candidates.size < SUGGESTIONS) {
    for (const d of (await library.listDocuments({ limit: MAX_LIST_LIMIT })).documents) candidates.set(d.id, d);
  }
  const target = wanted.toLowerCase();
  const scored = [...candidates.values()].map((d) => {
    const name = (key(d) || d.filename).toLowerCase();
    return { d, score: distance(name, target) / Math.max(name.length, target.length, 1) };
  });
  // A name more than two-thirds different is no suggestion.
  return scored.filter((x) => x.score <= 2 / 3).sort((a, b) => a.score - b.score).slice(0, SUGGESTIONS).map((x) => x.d);
}
