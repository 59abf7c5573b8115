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
  /** Nothing to send: the project holds these bytes at this path (or elsewhere); `document` is the one holding them. */
  unchanged: Array<{ file: LocalFile; document: DocumentRecord }>;
  /** Documents to delete: paths gone from the folder (--prune), and old versions whose new bytes the project already holds under another path. */
  remove: Array<{ document: DocumentRecord; reason: 'pruned' | 'stale' }>;
  /** Documents the sync covers (those with a path, below the prefix): what the delete guard measures against. */
  synced: number;
}

/** The path a local file is kept at in the project: below `prefix` when the sync has one (`--prefix handbook`). */
export const syncedPath = (rel: string, prefix: string | undefined): string => (prefix ? `${prefix}/${rel}` : rel);

/** Whether a document belongs to the sync: it has a path, and that path lies below the prefix when there is one. */
const inScope = (path: string | null | undefined, prefix: string | undefined): path is string => Boolean(path) && (!prefix || path!.startsWith(`${prefix}/`));

/**
 * Compares a folder with a project: each local file costs one hash, compared with the documents' sha256 and
 * path from the API. Documents without a path (uploaded without --sync), or outside the prefix (another folder's
 * sync), are never touched. `local[].rel` is already the path in the project (see syncedPath).
 */
export function planSync(local: Array<LocalFile & { sha256: string }>, documents: DocumentRecord[], prune: boolean, prefix?: string): SyncPlan {
  const atPath = new Map<string, DocumentRecord[]>();
  for (const d of documents) if (inScope(d.path, prefix)) atPath.set(d.path, [...(atPath.get(d.path) ?? []), d]);
  const bySha = new Map(documents.map((d) => [d.sha256, d]));
  const plan: SyncPlan = { add: [], replace: [], unchanged: [], remove: [], synced: [...atPath.values()].reduce((n, docs) => n + docs.length, 0) };
  for (const f of local) {
    const here = atPath.get(f.rel) ?? [];
    const same = here.find((d) => d.sha256 === f.sha256);
    const elsewhere = bySha.get(f.sha256);
    if (same) plan.unchanged.push({ file: f, document: same });
    else if (elsewhere) {
      // The server would answer "duplicate" (a project holds each content once): the old version here goes.
      plan.unchanged.push({ file: f, document: elsewhere });
      for (const d of here) plan.remove.push({ document: d, reason: 'stale' });
    } else (here.length > 0 ? plan.replace : plan.add).push(f);
  }
  if (prune) {
    const present = new Set(local.map((f) => f.rel));
    for (const [path, docs] of atPath) if (!present.has(path)) for (const d of docs) plan.remove.push({ document: d, reason: 'pruned' });
  }
  return plan;
}

/** The default --max-delete: half of the documents the sync covers (at least 1: deleting one file is never a mass delete). */
export const defaultMaxDelete = (synced: number): number => Math.max(1, Math.floor(synced / 2));

export const pruned = (plan: SyncPlan) => plan.remove.filter((r) => r.reason === 'pruned');
