import { isDeepStrictEqual } from 'node:util';
import { lowerKey } from '../../core/name-spellings.js';
import { DOCUMENT, type DocumentRecord } from '../api-types.js';
import type { ApiClient } from '../http.js';
import { ApiError } from '../../terminal/errors.js';
import { type IO, notice, warn } from '../../terminal/io.js';
import type { LocalFile } from './collect-files.js';
import type { Outcome } from './reporter.js';

/** What a run asks of every document it touches: the labels to put on it and the metadata to merge over its own. */
export interface Asked {
  labels?: string[];
  metadata?: Record<string, unknown>;
}

/** The metadata keys of the run that the document does not hold with the same value. */
const metadataNotHeld = (asked: Asked, d: DocumentRecord): string[] =>
  Object.entries(asked.metadata ?? {}).flatMap(([k, v]) => (isDeepStrictEqual(v, d.metadata?.[k]) ? [] : [k]));

/**
 * Whether a document the project already holds lacks a label or a metadata value the run asks for: a sync gives it
 * them (giveAsked) although its file is unchanged, as a plain upload of the file would.
 */
export function lacksAsked(d: DocumentRecord, asked: Asked): boolean {
  const held = new Set((d.labels ?? []).map(lowerKey));
  return (asked.labels ?? []).some((l) => !held.has(lowerKey(l))) || metadataNotHeld(asked, d).length > 0;
}

/**
 * Files the project already held come back as that document (`duplicate: true`), which the server gives the run's
 * labels and metadata, but not metadata while it is still being indexed (or when the server is older than that):
 * each is said, so asking for labels or metadata never passes silently for done. Every mode of `upload` says it so.
 */
export function sayDuplicates(io: IO, asked: Asked, sent: Array<{ path: string; document?: DocumentRecord }>): void {
  for (const { path, document: d } of sent) {
    if (!d?.duplicate) continue;
    if (asked.labels && asked.labels.length > 0) notice(io, `${path}: already uploaded as ${d.id}; labelled ${asked.labels.join(', ')}`);
    const kept = metadataNotHeld(asked, d);
    if (kept.length === 0) continue;
    warn(io, `${path}: already uploaded as ${d.id}, which kept its own metadata (${kept.join(', ')} not changed: it is still being indexed); upload the file again once it is ready`);
  }
}

/**
 * Gives documents the project already holds what the run asks of them — its labels added, its metadata merged — with
 * `PATCH /api/v1/documents/{id}`, not by sending their unchanged bytes again (a folder given a new label is not
 * uploaded anew). The server refuses metadata while a document is being indexed (409): its labels are still given,
 * and sayDuplicates says which metadata it kept. Each comes back as a plain upload of the file would (`duplicate`),
 * to `settle` as it is done (a run stopped later still reports it); one the server refuses otherwise fails alone.
 */
export async function giveAsked(http: ApiClient, held: Array<{ file: LocalFile; document: DocumentRecord }>, asked: Asked, settle: (o: Outcome) => void, signal?: AbortSignal): Promise<void> {
  for (const { file, document: d } of held) {
    const path = `/api/v1/documents/${encodeURIComponent(d.id)}`;
    const labels = asked.labels && asked.labels.length > 0 ? { labels: { add: asked.labels } } : undefined;
    const missing = metadataNotHeld(asked, d);
    const metadata = missing.length > 0 ? { metadata: Object.fromEntries(missing.map((k) => [k, asked.metadata![k]])) } : undefined;
    const opts = { shape: DOCUMENT, ...(signal ? { signal } : {}) };
    try {
      let document: DocumentRecord;
      try {
        document = await http.patch(path, { ...labels, ...metadata }, opts);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && metadata)) throw err;
        document = labels ? await http.patch(path, labels, opts) : d;
      }
      settle({ file, document: { ...document, duplicate: true } });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 401) throw err;
      settle({ file, error: err.message });
    }
  }
}
