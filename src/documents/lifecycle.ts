/**
 * The document lifecycle outside the worker: accepting received uploads (file store + documents row + job),
 * renaming, moving between projects and retrying failed documents, deleting a document into the trash (out of
 * search at once, its chunks and original kept), restoring it, and removing it for good — purged from the trash,
 * after the trash's retention, replaced by a newer version, or with its whole project (chunks out of the index,
 * originals when no document references them any more) — and waiting for documents to settle (`?wait=true`).
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { AuditLog } from '../core/audit.js';
import { AppError, conflict, invalidRequest, notFound } from '../core/errors.js';
import { metadataEntries, metaList } from '../core/metadata-entries.js';
import { bytesProblem, MAX_PATH_BYTES } from '../core/storable-text.js';
import type { Events, Locks } from '../store/coordination.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import { type DocumentRecord, type DocumentStore, MAX_METADATA_CHARS, type ReplaceOutcome } from '../store/sql/documents.js';
import type { ProjectStore } from '../store/sql/projects.js';
import type { FileStore } from '../store/objects/originals.js';
import type { Attachment, DocumentType } from '../ingest/types.js';
import type { AttachmentSink } from '../ingest/worker.js';
import type { LabelService } from './labels.js';
import type { QuotaTerms } from '../store/sql/quotas.js';
import { isQuotaExceeded, type Quotas } from './quotas.js';

/** A file streamed to the file store's temp folder, hashed and typed. */
export interface ReceivedFile {
  tempPath: string;
  filename: string;
  contentType: DocumentType;
  sizeBytes: number;
  sha256: string;
  /** The relative path it was uploaded from: a ready upload replaces the older document at the same path. */
  path?: string | null;
  /** The source it came from and its path there (sources/sync.ts). */
  source?: { id: string; path: string };
}

/** What an upload sets its documents to; each unset one is the project's setting (null there too: detected / the operator's). */
export interface UploadSettings {
  /** The language its chunks are analysed in (ISO 639-1), rather than detected. */
  language?: string | null;
  /** The OCR languages ("deu+eng") its scanned pages are read in. */
  ocrLanguages?: string | null;
}

export interface AcceptedDocument {
  document: DocumentRecord;
  duplicate: boolean;
}

export interface DocumentServiceDeps {
  documents: DocumentStore;
  projects: ProjectStore;
  files: FileStore;
  chunks: ChunkIndex;
  /** Placing and releasing the same original never interleave, in this process or another sharing the library. */
  locks: Locks;
  /**
   * Where queued jobs are announced (`jobs`: wakes the ingest workers of every process) and settled documents
   * (`document_settled`: wakes `waitSettled` here and in every other process sharing the library).
   */
  events: Events;
  now: Clock;
  /** Where deletes and moves are recorded (who and from where: the request's audit context). */
  audit: AuditLog;
  /**
   * How often a waiting upload looks again without being woken (default 1 s): only a safety net, since settled
   * documents are announced; in shared mode announcements cross replicas, so it can be longer.
   */
  settlePollMs?: number;
  /** How long a replaced version is kept, hidden, for the searches that began before the swap (`--replaced-grace`; default REPLACED_GRACE_MS). */
  replacedGraceMs?: number;
  /** How long a deleted document stays in the trash (`--trash-days`); 0: deleting removes it for good at once. */
  trashRetentionMs?: number;
  /** Labels: set at upload, carried over to a moved document's new project. */
  labels?: LabelService;
  /**
   * Holds every write that adds live bytes to the accounts' and projects' quotas (documents/quotas.ts): an upload is
   * refused before anything of it is stored, a restore, a move or a new version is refused, an attachment not kept.
   */
  quotas?: Pick<Quotas, 'check' | 'defaultUserBytes'>;
}

/** The trash keeps a deleted document this long unless told otherwise. */
export const DEFAULT_TRASH_RETENTION_MS = 30 * 24 * 3600_000;

const TERMINAL = new Set(['ready', 'failed']);

const originalLock = (sha256: string) => `original:${sha256}`;

/**
 * One change of a document's place at a time: a move, a metadata merge, a restore and a removal for good of the same
 * document never interleave (a purge that found it in the trash removed it after a restore had answered 200).
 */
const documentLock = (id: string) => `document:${id}`;

/**
 * A replaced document's chunks stay this long after the swap: a search that started before it still reads them
 * (retrieval, then hydration). Searches take a few seconds at most (the reranker's deadline is 2 s).
 */
export const REPLACED_GRACE_MS = 15_000;

export class DocumentService implements AttachmentSink {
  private readonly waiters = new Set<() => void>();
  private stopped = false;
  /** The pending sweep of replaced documents; `again` when a document settled after it was set. */
  private sweep: { again: boolean } | undefined;
  private readonly replacedGraceMs: number;

  constructor(private readonly deps: DocumentServiceDeps) {
    this.replacedGraceMs = deps.replacedGraceMs ?? REPLACED_GRACE_MS;
    deps.events.subscribe('document_settled', () => {
      for (const wake of this.waiters) wake();
    });
  }

  /**
   * Stores each file under its hash and queues a document for it, in order, uploaded by `userId` into a project
   * the caller checked they may edit, with `labels` (names) on each. Bytes already in the project give back the
   * existing document with `duplicate: true` (nothing re-embedded; the labels are added to it) and add nothing to
   * a quota. Past a quota nothing of the upload is kept (`quota_exceeded`). Temp files are consumed.
   */
  async accept(
    userId: string,
    projectId: string,
    files: ReceivedFile[],
    metadata: Record<string, unknown>,
    labels: readonly string[] = [],
    settings: UploadSettings = {},
  ): Promise<AcceptedDocument[]> {
    // Under a quota, what each file adds (bytes the project holds, or an earlier file of the upload, add nothing).
    let adds = files.map((f) => f.sizeBytes);
    const limited =
      (await this.deps.quotas?.check(userId, projectId, async () => {
        const held = await this.deps.documents.liveShas(projectId, files.map((f) => f.sha256));
        adds = files.map((f, i) => (held.has(f.sha256) || files.findIndex((g) => g.sha256 === f.sha256) < i ? 0 : f.sizeBytes));
        return adds.reduce((n, b) => n + b, 0);
      })) === true;
    const after = adds.map((_, i) => adds.slice(i + 1).reduce((n, b) => n + b, 0));
    const project = await this.deps.projects.get(projectId);
    const set = {
      languageSetting: settings.language ?? project?.language ?? null,
      ocrLanguages: settings.ocrLanguages ?? project?.ocrLanguages ?? null,
    };
    const out: AcceptedDocument[] = [];
    try {
      for (const [i, f] of files.entries()) {
        await this.purgeGoneCopy(projectId, f.sha256);
        // Each write decides again, its file and the ones after it, so two uploads at once cannot pass a quota together.
        const quota = limited ? { ...this.quotaTerms!, bytes: f.sizeBytes + after[i]! } : undefined;
        out.push(await this.deps.locks.withLock(originalLock(f.sha256), () => this.place(userId, projectId, f, metadata, set, quota)));
      }
    } catch (err) {
      // Another write took the room after the check above: what this upload stored goes again, so it is refused whole.
      if (isQuotaExceeded(err)) for (const d of out) if (!d.duplicate) await this.deleteById(d.document.id);
      throw err;
    }
    // Before the jobs are announced; a duplicate (already indexed) gets them on its chunks at once.
    if (labels.length > 0 && this.deps.labels) await this.deps.labels.change(out.map((d) => d.document), { add: labels });
    // A file the project had gets the upload's metadata merged over its own, as it gets its labels; not while it is
    // still being indexed (then it keeps its own, which the answer shows).
    if (Object.keys(metadata).length > 0) {
      for (const accepted of out) {
        if (!accepted.duplicate || accepted.document.status === 'queued' || accepted.document.status === 'processing') continue;
        accepted.document = await this.mergeMetadata(accepted.document, metadata).catch((err: unknown) => {
          if (err instanceof AppError && (err.status === 409 || err.status === 400)) return accepted.document;
          throw err;
        });
      }
    }
    const queued = out.find((d) => !d.duplicate);
    // The upload is stored either way; a worker that misses the announcement finds the job at its next poll.
    if (queued) await this.deps.events.publish('jobs', queued.document.id).catch(() => undefined);
    // Who put which bytes where (a duplicate changed nothing: it is the document the project had).
    for (const { document: d, duplicate } of out) {
      if (duplicate) continue;
      await this.deps.audit.record({
        type: 'document.uploaded',
        target: { type: 'document', id: d.id, label: d.filename },
        details: { project: d.projectId, sha256: d.sha256, size_bytes: d.sizeBytes, ...(d.path ? { path: d.path } : {}), ...(d.sourcePath ? { source_path: d.sourcePath } : {}) },
      });
    }
    return out;
  }

  /**
   * Gives a settled document new bytes and keeps its id (a source's item changed): stored under their hash, the
   * row queued again with them (DocumentStore.replaceContent), its job run again; the old bytes' original goes
   * when nothing references it any more. `busy` (still being indexed) and `same_content` (another document of the
   * project holds these bytes) change nothing. The temp file is consumed either way.
   */
  async replace(id: string, f: ReceivedFile, metadata: Record<string, unknown>): Promise<ReplaceOutcome> {
    const outcome = await this.deps.locks.withLock(originalLock(f.sha256), async () => {
      await this.deps.files.place(f.tempPath, f.sha256);
      let replaced: ReplaceOutcome | undefined;
      try {
        replaced = await this.deps.documents.replaceContent(id, {
          filename: f.filename,
          contentType: f.contentType,
          sizeBytes: f.sizeBytes,
          sha256: f.sha256,
          metadata,
          sourcePath: f.source?.path ?? null,
        }, this.quotaTerms);
        return replaced;
      } finally {
        if (replaced?.outcome !== 'replaced' && (await this.deps.documents.countBySha(f.sha256)) === 0) await this.deps.files.remove(f.sha256);
      }
    });
    if (outcome.outcome !== 'replaced') return outcome;
    await this.deps.audit.record({
      type: 'document.replaced',
      target: { type: 'document', id, label: outcome.document.filename },
      details: { project: outcome.document.projectId, sha256: outcome.document.sha256, previous_sha256: outcome.previousSha256, ...(f.source ? { source_path: f.source.path } : {}) },
    });
    await this.release(outcome.previousSha256);
    await this.deps.events.publish('jobs', id).catch(() => undefined);
    return outcome;
  }

  /**
   * The same bytes uploaded again after a delete are a new document, as before there was a trash (a sync re-sends a
   * moved file's bytes under its new path): the copy in the project's trash goes for good first. So does a version a
   * newer one at its path replaced, which waits out its grace hidden: answered with it, the upload went with it.
   */
  private async purgeGoneCopy(projectId: string, sha256: string): Promise<void> {
    const gone = await this.deps.documents.goneCopy(projectId, sha256);
    if (!gone) return;
    // Looked at again under its lock: restored meanwhile, it is the project's again (and the upload its duplicate).
    const removed = await this.deps.locks.withLock(documentLock(gone), async () =>
      (await this.deps.documents.goneCopy(projectId, sha256)) === gone ? this.removeRow(gone) : null,
    );
    if (removed) await this.afterRemoval(removed);
  }

  /** Stores one file's original and records its queued document (under the original's lock). */
  private async place(
    userId: string,
    projectId: string,
    f: ReceivedFile,
    metadata: Record<string, unknown>,
    set: { languageSetting: string | null; ocrLanguages: string | null },
    quota: (QuotaTerms & { bytes: number }) | undefined,
  ): Promise<AcceptedDocument> {
    await this.deps.files.place(f.tempPath, f.sha256);
    try {
      return await this.deps.documents.createQueued({
        userId,
        projectId,
        filename: f.filename,
        contentType: f.contentType,
        sizeBytes: f.sizeBytes,
        sha256: f.sha256,
        metadata,
        path: f.path ?? null,
        ...set,
        ...(f.source ? { sourceId: f.source.id, sourcePath: f.source.path } : {}),
      }, quota);
    } catch (err) {
      if ((await this.deps.documents.countBySha(f.sha256)) === 0) await this.deps.files.remove(f.sha256);
      throw err;
    }
  }

  /**
   * An e-mail's attachments become documents of their own in its project, linked to it (`attachedTo`), at
   * `<message path>/<attachment name>` when the message has a path (so `upload --sync` finds them under it and
   * leaves them to it). Bytes the project already holds as an attachment (this job run before, or an earlier
   * version of the message) are linked to this message instead of stored twice; bytes it holds as a document
   * uploaded by itself stay that document. One that would pass a quota is not kept: the warnings returned say so.
   */
  async acceptAttachments(message: DocumentRecord, attachments: Attachment[]): Promise<string[]> {
    let queued = false;
    const warnings: string[] = [];
    for (const a of attachments) {
      const sha256 = createHash('sha256').update(a.bytes).digest('hex');
      const tempPath = await this.deps.files.tempFileOf(a.bytes);
      const under = message.path === null ? null : `${message.path}/${a.filename}`;
      // A message at a path near the limit: its attachment's would pass what the path index holds, so it has none.
      const path = under !== null && bytesProblem(under, MAX_PATH_BYTES) ? null : under;
      await this.purgeGoneCopy(message.projectId, sha256);
      const quota = this.quotaTerms && { ...this.quotaTerms, bytes: a.bytes.byteLength };
      const made = await this.deps.locks.withLock(originalLock(sha256), async () => {
        await this.deps.files.place(tempPath, sha256);
        try {
          return await this.deps.documents.createQueued({
            userId: message.userId,
            projectId: message.projectId,
            filename: a.filename,
            contentType: a.contentType,
            sizeBytes: a.bytes.byteLength,
            sha256,
            metadata: {},
            path,
            attachedTo: message.id,
          }, quota);
        } catch (err) {
          if ((await this.deps.documents.countBySha(sha256)) === 0) await this.deps.files.remove(sha256);
          if (isQuotaExceeded(err)) {
            warnings.push(`the attachment ${a.filename} was not kept: ${err.message}`);
            return null;
          }
          // Its project was deleted while the job ran, the message with it: the job ends as for a deleted message
          // (thrown, it stopped the worker's loop, and nothing more was indexed until a restart).
          if ((await this.deps.documents.existing([message.id])).size === 0) return 'gone' as const;
          throw err;
        }
      });
      if (made === 'gone') break;
      if (!made) continue;
      const { document, duplicate } = made;
      if (duplicate && document.attachedTo !== message.id) await this.deps.documents.relinkAttachment(document.id, message.id, path);
      queued ||= !duplicate;
    }
    // The message may have been deleted into the trash while its job ran: what it made goes there with it.
    if (attachments.length > 0) await this.deps.documents.trashWithMessage(message.id);
    if (queued) await this.deps.events.publish('jobs', message.id).catch(() => undefined);
    return warnings;
  }

  /** Deletes the documents attached to a message (the message itself was deleted, or is being). */
  async removeAttachments(message: Pick<DocumentRecord, 'id'>): Promise<void> {
    for (const id of await this.deps.documents.attachmentsOf(message.id)) await this.deleteById(id);
  }

  /** Gives a document another name (results show it at once: search reads names from the row). */
  async rename(doc: Pick<DocumentRecord, 'id'>, filename: string): Promise<DocumentRecord> {
    const renamed = await this.deps.documents.rename(doc.id, filename);
    if (!renamed) throw notFound('document');
    return renamed;
  }

  /**
   * Moves a document into another project (the caller checked both): the row first (with its checks, see
   * DocumentStore.move), then its chunks in one commit; if the chunks cannot move, the row goes back. Search
   * scopes projects on the chunks, so at any instant a search finds the document under exactly one project.
   * One move of a document at a time, so two moves can't leave the row and the chunks in different projects.
   */
  async move(doc: Pick<DocumentRecord, 'id'>, projectId: string): Promise<DocumentRecord> {
    const id = doc.id;
    // A hidden version this move removes: what follows its row is done once the lock is let go (afterRemoval).
    let removed: DocumentRecord | null = null as DocumentRecord | null;
    try {
      return await this.deps.locks.withLock(documentLock(id), async () => {
        // A version of these bytes a newer one replaced there waits out its grace hidden: it goes now, as for an upload.
        const record = await this.deps.documents.get(id);
        const gone = record && record.projectId !== projectId && (await this.deps.documents.goneCopy(projectId, record.sha256));
        if (gone && !(await this.deps.documents.trashed(gone))) removed = await this.removeRow(gone);
        const moved = await this.deps.documents.move(id, projectId, this.quotaTerms);
        switch (moved.outcome) {
          case 'not_found':
            throw notFound('document');
          case 'busy':
            throw conflict('the document is still being indexed: move it once it is ready (or failed)');
          case 'same_content':
            throw conflict(`the other project already holds the same file ("${moved.other}")${moved.inTrash ? ' in its trash: restore or purge it there first' : ''}`);
          case 'same_path':
            throw conflict(`the other project already has a document at this document's path ("${moved.other}")`);
        }
        if (moved.from === projectId) return moved.document;
        // Labels are a project's: the moved document keeps the same names in its new project.
        const carried = await this.deps.labels?.carryOver(id, projectId);
        try {
          const labels = this.deps.labels;
          if (labels) await labels.withCurrentLabels(id, (ids) => this.deps.chunks.moveDocument(id, projectId, { labels: ids }));
          else await this.deps.chunks.moveDocument(id, projectId);
        } catch (err) {
          await this.deps.documents.unmove(id, moved.from);
          await carried?.restore();
          throw err;
        }
        await this.deps.audit.record({ type: 'document.moved', target: { type: 'document', id, label: moved.document.filename }, details: { from_project: moved.from, to_project: projectId } });
        return moved.document;
      });
    } finally {
      if (removed) await this.afterRemoval(removed);
    }
  }

  /** A failed document is queued again: its job runs as if the file were new (see DocumentStore.retry). */
  async retry(doc: DocumentRecord): Promise<DocumentRecord> {
    if (!(await this.deps.documents.retry(doc.id))) {
      const now = await this.deps.documents.get(doc.id);
      if (!now) throw notFound('document');
      throw conflict(`only a failed document can be retried (this one is ${now.status})`);
    }
    await this.deps.events.publish('jobs', doc.id).catch(() => undefined);
    return (await this.deps.documents.get(doc.id)) ?? doc;
  }

  /**
   * Deletes a document and the documents attached to it (the caller checked it may), `by` a user: into the trash,
   * out of search at once, for the trash's retention — or for good when the trash keeps nothing. False when it is
   * gone (or in the trash) already.
   */
  async delete(doc: Pick<DocumentRecord, 'id'>, by: string | null = null): Promise<boolean> {
    const record = await this.deps.documents.get(doc.id);
    if (!record) return false;
    let deleted: boolean;
    if (this.retentionMs === 0) deleted = (await this.deleteById(doc.id)) !== null;
    else {
      deleted = await this.deps.documents.trash(doc.id, by);
      // Waits on it end: it is gone as far as they are concerned.
      if (deleted) this.settled(doc.id);
    }
    if (deleted) await this.deps.audit.record({ type: 'document.deleted', target: { type: 'document', id: record.id, label: record.filename }, details: { project: record.projectId } });
    return deleted;
  }

  /**
   * Merges metadata over a settled document's (DocumentStore.mergeMetadata; 409 while it is being indexed), and gives
   * its chunks the result, which the filters read there. One change of a document's chunks at a time, as a move.
   */
  async mergeMetadata(doc: Pick<DocumentRecord, 'id'>, patch: Record<string, unknown>): Promise<DocumentRecord> {
    return this.deps.locks.withLock(documentLock(doc.id), async () => {
      const merged = await this.deps.documents.mergeMetadata(doc.id, patch);
      if (merged.outcome === 'not_found') throw notFound('document');
      if (merged.outcome === 'busy') throw conflict('the document is still being indexed: its metadata can change once it is ready');
      if (merged.outcome === 'too_large') throw invalidRequest(`metadata: the document's would pass ${MAX_METADATA_CHARS / 1024} KiB of JSON`);
      if (merged.changed) await this.deps.chunks.setDocumentFields([doc.id], { meta: metaList(metadataEntries(merged.metadata)) });
      const now = await this.deps.documents.get(doc.id);
      if (!now) throw notFound('document');
      return now;
    });
  }

  /**
   * A source's document follows its file renamed or moved (DocumentStore.follow); its chunks get the metadata it has
   * then, which the filters read there. One that goes to another source (`sourceId`) trades the labels the old source
   * put on for the new one's (`labels`), and its chunks get the new source for the filters.
   */
  async follow(id: string, to: Parameters<DocumentStore['follow']>[1], labels?: { remove: readonly string[]; add: readonly string[] }): Promise<void> {
    const metadata = await this.deps.documents.follow(id, to);
    const fields = { ...(metadata ? { meta: metaList(metadataEntries(metadata)) } : {}), ...(to.sourceId ? { source_id: to.sourceId } : {}) };
    if (Object.keys(fields).length > 0) await this.deps.chunks.setDocumentFields([id], fields);
    const doc = labels && this.deps.labels ? await this.deps.documents.get(id) : null;
    if (doc && labels) {
      // The new source's labels stay on when the old one had them too.
      const remove = labels.remove.filter((name) => !labels.add.includes(name));
      await this.deps.labels!.change([doc], { ...(remove.length > 0 ? { remove } : {}), ...(labels.add.length > 0 ? { add: labels.add } : {}) });
    }
  }

  /**
   * Takes a document out of the trash (the caller checked it may): searchable again at once, under its id. Refused
   * (409) when it, or an attachment coming back with it, would take a path in use, and (507) past a quota.
   */
  async restore(doc: Pick<DocumentRecord, 'id'>): Promise<DocumentRecord> {
    const restored = await this.deps.locks.withLock(documentLock(doc.id), () => this.deps.documents.restore(doc.id, this.quotaTerms));
    switch (restored.outcome) {
      case 'not_found':
        throw notFound('document');
      case 'same_path':
        throw conflict(
          `another document is at ${restored.attachment === undefined ? 'its path' : `the path of its attachment "${restored.attachment}"`} now ("${restored.other}"): delete or move that one first`,
        );
    }
    const d = restored.document;
    await this.deps.audit.record({ type: 'document.restored', target: { type: 'document', id: d.id, label: d.filename }, details: { project: d.projectId } });
    return d;
  }

  /** Removes a document in the trash for good now (the caller checked it may); false when it is not in the trash. */
  async purge(doc: Pick<DocumentRecord, 'id'>): Promise<boolean> {
    const purged = await this.deleteFromTrash(doc.id, Infinity);
    if (purged) await this.recordPurge(purged, 'by hand');
    return purged !== null;
  }

  /**
   * Removes a document for good if it is in the trash since before `before`, looked at under its lock: a restore
   * answered meanwhile keeps it (the chunks go first, so one checked outside the lock lost them and its row).
   */
  private async deleteFromTrash(id: string, before: number): Promise<DocumentRecord | null> {
    const removed = await this.deps.locks.withLock(documentLock(id), async () => {
      const trashed = await this.deps.documents.trashed(id);
      return trashed && trashed.trashedAt! < before ? this.removeRow(id) : null;
    });
    if (removed) await this.afterRemoval(removed);
    return removed;
  }

  private recordPurge(d: DocumentRecord, reason: 'by hand' | 'retention'): Promise<void> {
    return this.deps.audit.record({ type: 'document.purged', target: { type: 'document', id: d.id, label: d.filename }, details: { project: d.projectId, sha256: d.sha256, reason } });
  }

  /** Removes for good what has been in the trash longer than its retention; how many documents went. */
  async purgeExpiredTrash(): Promise<number> {
    if (this.retentionMs === 0) return 0;
    let purged = 0;
    for (;;) {
      const before = this.deps.now() - this.retentionMs;
      const ids = await this.deps.documents.expiredTrash(before);
      for (const id of ids) {
        const gone = await this.deleteFromTrash(id, before);
        if (!gone) continue;
        purged++;
        await this.recordPurge(gone, 'retention');
      }
      if (ids.length < 1000) return purged;
    }
  }

  /** When a document in the trash is removed for good unless restored. */
  purgeAt(doc: Pick<DocumentRecord, 'trashedAt'>): number {
    return (doc.trashedAt ?? this.deps.now()) + this.retentionMs;
  }

  /** What the store's writes hold to (claimQuota), or undefined: no quotas here. */
  private get quotaTerms(): QuotaTerms | undefined {
    return this.deps.quotas ? { defaultUserBytes: this.deps.quotas.defaultUserBytes } : undefined;
  }

  private get retentionMs(): number {
    return this.deps.trashRetentionMs ?? DEFAULT_TRASH_RETENTION_MS;
  }

  /** Removes a document for good, in the trash or not: chunks, row, original when unshared, its attachments. */
  private async deleteById(id: string): Promise<DocumentRecord | null> {
    const doc = await this.removeRow(id);
    if (doc) await this.afterRemoval(doc);
    return doc;
  }

  /** A document's chunks and row, for good (what may hold its lock): the first half of deleteById. */
  private async removeRow(id: string): Promise<DocumentRecord | null> {
    const doc = await this.deps.documents.forRemoval(id);
    if (!doc) return null;
    // Chunks first: once the row is gone nothing points at them, and search must stop finding them now.
    await this.deps.chunks.deleteDocument(doc.id);
    await this.deps.documents.delete(doc.id);
    return doc;
  }

  /**
   * What follows a removed row: its original when unshared, waits on it, its attachments. Never under a document's
   * lock: it takes the originals' locks, and on PostgreSQL each lock held is a connection of a pool of 10, so locks
   * taken inside locks by a dozen requests at once waited for each other until the requests failed (503).
   */
  private async afterRemoval(doc: DocumentRecord): Promise<void> {
    await this.release(doc.sha256);
    this.settled(doc.id);
    // Its attachments go with it (the reverse never: an attachment deleted leaves its message).
    await this.removeAttachments(doc);
  }

  /** Deletes a project (the caller checked it may) with its documents, their chunks and (unshared) originals. */
  async removeProject(projectId: string): Promise<void> {
    const project = await this.deps.projects.get(projectId);
    const docs = await this.deps.documents.listInProject(projectId);
    await this.deps.chunks.deleteProject(projectId);
    await this.deps.projects.delete(projectId); // documents, jobs and members cascade
    for (const sha of new Set(docs.map((d) => d.sha256))) await this.release(sha);
    for (const d of docs) this.settled(d.id);
    await this.deps.audit.record({ type: 'project.deleted', target: { type: 'project', id: projectId, label: project?.name ?? null }, details: { documents: docs.length } });
  }

  /** Removes the original when no document references it any more; true when it was removed. */
  private async release(sha256: string): Promise<boolean> {
    return this.deps.locks.withLock(originalLock(sha256), async () => {
      if ((await this.deps.documents.countBySha(sha256)) > 0) return false;
      await this.deps.files.remove(sha256);
      return true;
    });
  }

  /**
   * Startup sweep: temp files of interrupted uploads, and originals no document references (a crash between
   * placing one and recording its document). Only originals written before `minAgeMs` ago are considered: with
   * replicas sharing the store, one may have just placed an original it is about to record. Each is re-checked
   * under its lock, so an upload of the same bytes meanwhile keeps it.
   */
  async sweepOriginals(minAgeMs: number): Promise<{ temp: number; orphans: number }> {
    const temp = await this.deps.files.sweepTemp();
    let orphans = 0;
    const candidates = await this.deps.files.unreferenced(await this.deps.documents.allShas(), minAgeMs > 0 ? this.deps.now() - minAgeMs : Infinity);
    for (const sha of candidates) if (await this.release(sha)) orphans++;
    return { temp, orphans };
  }

  /**
   * Startup sweep of index rows whose document is gone, which no search shows but which take space and count in a
   * re-index. Deletion removes a document's rows before its record, and a worker takes back the rows of a document
   * deleted under it, so these come only from a crash in between or from a library written in shared mode before a
   * delete looked at the table's latest version (it could miss rows another replica had just appended). A
   * document's record exists before any of its rows, so a row found without one is safe to remove: its document was
   * deleted. Returns how many documents' rows went.
   */
  async sweepOrphanRows(): Promise<number> {
    const indexed = [...(await this.deps.chunks.documentIds())];
    const orphans: string[] = [];
    for (let i = 0; i < indexed.length; i += 1000) {
      const batch = indexed.slice(i, i + 1000);
      const known = await this.deps.documents.existing(batch);
      orphans.push(...batch.filter((id) => !known.has(id)));
    }
    await this.deps.chunks.deleteDocuments(orphans);
    return orphans.length;
  }

  /** Shutdown: every wait returns now with the current state, and later waits do not start. */
  stopWaiting(): void {
    this.stopped = true;
    for (const wake of this.waiters) wake();
  }

  /**
   * The worker calls this when a document reached ready or failed: waits on it end, in every process. Replaced
   * documents are removed here, by the process whose worker settled their successor.
   */
  settled(documentId: string): void {
    // Waiters poll as well, so a notification that cannot be sent only delays them.
    this.deps.events.publish('document_settled', documentId).catch(() => undefined);
    this.sweepReplacedLater();
  }

  /**
   * Replaced documents are already hidden from search; they are removed once searches that began before the swap
   * are done. One sweep per grace period however many documents settle in it (each sweep is a query; on PostgreSQL
   * two per document made it one of the most frequent): a settle during a pending sweep asks for one more after it,
   * so every replacement is swept within two grace periods. A failed removal is retried by the next sweep.
   */
  private sweepReplacedLater(): void {
    if (this.sweep) {
      this.sweep.again = true;
      return;
    }
    const sweep = { again: false };
    this.sweep = sweep;
    setTimeout(() => {
      this.sweep = undefined;
      void this.removeReplaced()
        .catch(() => undefined)
        .finally(() => {
          if (sweep.again) this.sweepReplacedLater();
        });
    }, this.replacedGraceMs + 100).unref();
  }

  /** Deletes documents a newer version at their path replaced more than the grace period ago (chunks, rows, unshared files). */
  private async removeReplaced(): Promise<void> {
    for (const id of await this.deps.documents.listReplaced(this.deps.now() - this.replacedGraceMs)) await this.deleteById(id);
  }

  /**
   * Resolves with the documents once each is ready or failed (or deleted), or with their current state when
   * `timeoutMs` runs out; `settled` says which.
   */
  async waitSettled(ids: string[], timeoutMs: number): Promise<{ documents: DocumentRecord[]; settled: boolean }> {
    const deadline = this.deps.now() + timeoutMs;
    for (;;) {
      const docs = await this.deps.documents.getMany(ids);
      const done = docs.every((d) => TERMINAL.has(d.status));
      const left = deadline - this.deps.now();
      if (done || left <= 0 || this.stopped) return { documents: ids.map((id) => docs.find((d) => d.id === id)).filter((d) => d !== undefined), settled: done };
      // Woken when a document settles (here or in another process); the poll is a safety net.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, Math.min(left, this.deps.settlePollMs ?? 1000));
        function finish() {
          clearTimeout(timer);
          waiters.delete(finish);
          resolve();
        }
        const waiters = this.waiters;
        waiters.add(finish);
      });
    }
  }
}
