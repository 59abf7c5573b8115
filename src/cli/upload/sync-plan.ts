import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DocumentRecord } from '../api-types.js';
import type { LocalFile } from './collect-files.js';

/** sha256 of a file, streamed: what the server computes for an upload. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface SyncPlan {
  /** New paths. */
  add: LocalFile[];
  /** Changed bytes at a path the project holds: the upload replaces that document once it is ready. */
  replace: LocalFile[];
  /** Nothing to send: the project holds these bytes at this path (or, for `stale`, elsewhere). */
  unchanged: LocalFile[];
  /** Documents to delete: paths gone from the folder (--prune), and old versions whose new bytes the project already holds under another path. */
  remove: Array<{ document: DocumentRecord; reason: 'pruned' | 'stale' }>;
}

/**
 * Compares a folder with a project: each local file costs one hash, compared with the documents' sha256 and
 * path from the API. Documents without a path (uploaded without --sync) are never touched.
 */
export function planSync(local: Array<LocalFile & { sha256: string }>, documents: DocumentRecord[], prune: boolean): SyncPlan {
  const atPath = new Map<string, DocumentRecord[]>();
  for (const d of documents) if (d.path) atPath.set(d.path, [...(atPath.get(d.path) ?? []), d]);
  const shas = new Set(documents.map((d) => d.sha256));
  const plan: SyncPlan = { add: [], replace: [], unchanged: [], remove: [] };
  for (const f of local) {
    const here = atPath.get(f.rel) ?? [];
    if (here.some((d) => d.sha256 === f.sha256)) plan.unchanged.push(f);
    else if (shas.has(f.sha256)) {
      // The server would answer "duplicate" (a project holds each content once): the old version here goes.
      plan.unchanged.push(f);
      for (const d of here) plan.remove.push({ document: d, reason: 'stale' });
    } else (here.length > 0 ? plan.replace : plan.add).push(f);
  }
  if (prune) {
    const present = new Set(local.map((f) => f.rel));
    for (const [path, docs] of atPath) if (!present.has(path)) for (const d of docs) plan.remove.push({ document: d, reason: 'pruned' });
  }
  return plan;
}
