import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { DocumentRecord } from '../api-types.js';
import type { LocalFile } from './collect-files.js';
import type { Asked } from './duplicates.js';

/** sha256 of a file, streamed: what the server computes for an upload. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The hashes of one long-running sync (`--watch`): a file whose size, times and inode are those it had when it was
 * hashed is not read again, so a pass over a large folder after one edit reads one file.
 */
export class HashCache {
  private readonly known = new Map<string, { stamp: string; sha256: string }>();

  async sha256(path: string): Promise<string> {
    const s = await stat(path);
    const stamp = `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
    const hit = this.known.get(path);
    if (hit?.stamp === stamp) return hit.sha256;
    const sha256 = await sha256File(path);
    this.known.set(path, { stamp, sha256 });
    return sha256;
  }

  /** Forgets the files no longer in the folder. */
  retain(paths: string[]): void {
    const keep = new Set(paths);
    for (const p of this.known.keys()) if (!keep.has(p)) this.known.delete(p);
  }
}

/** A file of the folder with its bytes' digest. */
export type HashedFile = LocalFile & { sha256: string };

export interface SyncPlan {
  /** New paths. */
  add: HashedFile[];
  /** Changed bytes at a path the project holds: the upload replaces that document once it is ready. */
  replace: HashedFile[];
  /** Nothing to send: the project holds these bytes at this path (or elsewhere); `document` is the one holding them. */
  unchanged: Array<{ file: HashedFile; document: DocumentRecord }>;
  /**
   * Documents to delete: paths gone from the folder (--prune), old versions whose new bytes the project already holds
   * under another path, and (--prune) documents whose file was moved: a project holds each content once, so a moved
   * file's document goes before its bytes are sent again under the new path.
   */
  remove: Array<{ document: DocumentRecord; reason: 'pruned' | 'stale' | 'moved' }>;
  /** Documents the sync covers (those with a path, below the prefix): what the delete guard measures against. */
  synced: number;
  /** A moved file's path in the project → the document its bytes had at the old path (see movedFields). */
  moves: Map<string, DocumentRecord>;
  /** Moved documents whose own path stays in the folder (see rehomeHeldBytes): no delete the guard need stop. */
  rehomed: Set<string>;
}

/** The path a local file is kept at in the project: below `prefix` when the sync has one (`--prefix handbook`). */
export const syncedPath = (rel: string, prefix: string | undefined): string => (prefix ? `${prefix}/${rel}` : rel);

/** Whether a document belongs to the sync: it has a path, and that path lies below the prefix when there is one. */
const inScope = (path: string | null | undefined, prefix: string | undefined): path is string =>
  Boolean(path) && (!prefix || path!.normalize('NFC').startsWith(`${prefix.normalize('NFC')}/`));

/**
 * The files, each at the path the project holds it at when that is its path in the other Unicode spelling: a folder
 * synced from a Mac has its names decomposed (NFD), the same folder elsewhere (a git clone, a Linux copy) composed
 * (NFC). They are one path, not a file gone and another come (which --prune would delete and send again).
 */
function asHeld(local: HashedFile[], held: Iterable<string>): HashedFile[] {
  const byKey = new Map<string, string>();
  for (const path of held) if (!byKey.has(path.normalize('NFC'))) byKey.set(path.normalize('NFC'), path);
  return local.map((f) => {
    const path = byKey.get(f.rel.normalize('NFC'));
    return path !== undefined && path !== f.rel ? { ...f, rel: path } : f;
  });
}

/**
 * Compares a folder with a project: each local file costs one hash, compared with the documents' sha256 and
 * path from the API. Documents without a path (files uploaded by name), outside the prefix (another folder's
 * sync), or attached to an e-mail (its attachments: `message.eml/report.pdf`, kept and deleted with the message), are
 * never touched. `local[].rel` is already the path in the project (see syncedPath).
 */
export function planSync(files: HashedFile[], documents: DocumentRecord[], prune: boolean, prefix?: string): SyncPlan {
  const atPath = new Map<string, DocumentRecord[]>();
  for (const d of documents) if (!d.attached_to && inScope(d.path, prefix)) atPath.set(d.path, [...(atPath.get(d.path) ?? []), d]);
  const local = asHeld(files, atPath.keys());
  const bySha = new Map(documents.map((d) => [d.sha256, d]));
  const plan: SyncPlan = { add: [], replace: [], unchanged: [], remove: [], synced: [...atPath.values()].reduce((n, docs) => n + docs.length, 0), moves: new Map(), rehomed: new Set() };
  const present = new Set(local.map((f) => f.rel));
  const moved = new Set<string>();
  for (const f of local) {
    const here = atPath.get(f.rel) ?? [];
    const same = here.find((d) => d.sha256 === f.sha256);
    const elsewhere = bySha.get(f.sha256);
    if (same) plan.unchanged.push({ file: f, document: same });
    else if (elsewhere && !elsewhere.attached_to && prune && inScope(elsewhere.path, prefix) && !present.has(elsewhere.path)) {
      // The same bytes under a path that is gone: a renamed or moved file, sent again at its new path.
      (here.length > 0 ? plan.replace : plan.add).push(f);
      plan.moves.set(f.rel, elsewhere);
      if (!moved.has(elsewhere.id)) plan.remove.push({ document: elsewhere, reason: 'moved' });
      moved.add(elsewhere.id);
    } else if (elsewhere) {
      // The server would answer "duplicate" (a project holds each content once): the old version here goes.
      plan.unchanged.push({ file: f, document: elsewhere });
      for (const d of here) plan.remove.push({ document: d, reason: 'stale' });
    } else (here.length > 0 ? plan.replace : plan.add).push(f);
  }
  if (prune) {
    for (const [path, docs] of atPath) if (!present.has(path)) for (const d of docs) if (!moved.has(d.id)) plan.remove.push({ document: d, reason: 'pruned' });
  }
  rehomeHeldBytes(plan, atPath);
  return plan;
}

/**
 * A file whose bytes the project holds only as the document at another path (the same bytes at two paths, or a folder
 * uploaded plainly at `notes/…` and then synced), where that document leaves in this pass (stale, pruned, or replaced
 * by its own path's new bytes), would lose them from the project. It goes as a moved file's does: the document is
 * deleted first and the file sent at its own path, carrying the document's labels and metadata. Repeated until no
 * such file is left (a file sent makes its own path's old version a replacement, not a stale delete).
 */
function rehomeHeldBytes(plan: SyncPlan, atPath: Map<string, DocumentRecord[]>): void {
  for (;;) {
    const leaving = new Set(plan.remove.map((r) => r.document.id));
    const replaced = new Set(plan.replace.map((f) => f.rel));
    const orphan = plan.unchanged.find(
      (u) => u.document.path !== u.file.rel && !u.document.attached_to && (leaving.has(u.document.id) || replaced.has(u.document.path ?? '')),
    );
    if (!orphan) return;
    const { file, document } = orphan;
    plan.unchanged.splice(plan.unchanged.indexOf(orphan), 1);
    // Its own path's old versions (stale deletes so far) are now replaced by it when it is ready.
    const here = new Set((atPath.get(file.rel) ?? []).map((d) => d.id));
    plan.remove = plan.remove.filter((r) => !(r.reason === 'stale' && here.has(r.document.id)));
    (here.size > 0 ? plan.replace : plan.add).push(file);
    plan.moves.set(file.rel, document);
    const gone = plan.remove.find((r) => r.document.id === document.id);
    // Unless it was to be pruned, its path stays in the folder: not a delete the guard need stop.
    if (!gone || gone.reason === 'stale') plan.rehomed.add(document.id);
    if (gone) gone.reason = 'moved';
    else plan.remove.push({ document, reason: 'moved' });
  }
}

/** The default --max-delete: half of the documents the sync covers (at least 1: deleting one file is never a mass delete). */
export const defaultMaxDelete = (synced: number): number => Math.max(1, Math.floor(synced / 2));

/**
 * What the delete guard counts: documents leaving the path their file is gone from, pruned or moved. A move is counted
 * although its bytes are sent again: the same bytes in a wrong folder (another folder's files, a sync without its
 * --prefix) look like moves, and the guard must stop that.
 */
export const pruned = (plan: SyncPlan) => plan.remove.filter((r) => r.reason !== 'stale' && !plan.rehomed.has(r.document.id));

/** Deleted before anything is sent: until its document is gone, the server answers a moved file's bytes with it. */
export const movedAway = (plan: SyncPlan) => plan.remove.filter((r) => r.reason === 'moved').map((r) => r.document);

/**
 * The form fields a file is sent with: the run's, and for a moved file also the labels and metadata its old document
 * carried (the run's own over them), which would otherwise go with that document when the move deletes it.
 */
export function movedFields(plan: SyncPlan, fields: Record<string, string>, asked: Asked): (f: LocalFile) => Record<string, string> {
  return (f) => {
    const old = plan.moves.get(f.rel);
    if (!old) return fields;
    const labels = [...new Set([...(old.labels ?? []), ...(asked.labels ?? [])])];
    const metadata = { ...old.metadata, ...asked.metadata };
    return {
      ...fields,
      ...(labels.length > 0 ? { labels: JSON.stringify(labels) } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata: JSON.stringify(metadata) } : {}),
    };
  };
}
