import type { DocumentRecord } from '../api-types.js';
import type { ApiClient } from '../http.js';
import { ApiError } from '../../terminal/errors.js';
import { listDocuments, projectNames } from './documents/list.js';

/** Digests per request: the most `GET /api/v1/documents?sha256=` takes. */
const PER_REQUEST = 100;

export interface FoundElsewhere {
  rel: string;
  /** The document with the same bytes, and the name of its project. */
  document: DocumentRecord;
  project: string;
}

/**
 * Files about to be added to a project whose bytes the caller's library already holds in another project: a file
 * moved there (on the web, `documents move`) and then synced here again would otherwise become a second copy without
 * a word. A server without the `sha256` filter (older than this client) answers 400: nothing is said then.
 */
export async function foundElsewhere(http: ApiClient, files: { rel: string; sha256: string }[], projectId: string | undefined): Promise<FoundElsewhere[]> {
  const digests = [...new Set(files.map((f) => f.sha256))];
  const bySha = new Map<string, DocumentRecord>();
  try {
    for (let i = 0; i < digests.length; i += PER_REQUEST) {
      for (const d of await listDocuments(http, { sha256: digests.slice(i, i + PER_REQUEST).join(',') })) if (d.project_id !== projectId && !bySha.has(d.sha256)) bySha.set(d.sha256, d);
    }
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return [];
    throw err;
  }
  if (bySha.size === 0) return [];
  const names = await projectNames(http);
  return files.flatMap((f) => {
    const document = bySha.get(f.sha256);
    return document ? [{ rel: f.rel, document, project: names.get(document.project_id) ?? document.project_id }] : [];
  });
}

/** "notes/a.pdf is already in project Archive (as a.pdf): this makes a second copy" */
export const elsewhereLine = (f: FoundElsewhere): string =>
  `${f.rel} is already in project ${f.project}${f.document.path ?? f.document.filename ? ` (as ${f.document.path ?? f.document.filename})` : ''}: uploading it here makes a second copy`;
