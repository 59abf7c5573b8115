/**
 * The document lifecycle outside the worker: accepting received uploads (file store + documents row + job),
 * deleting a document or a whole project (chunks out of the index at once, originals when no document
 * references them any more), and waiting for documents to settle (`?wait=true`).
 */
import type { Clock } from '../core/clock.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentRecord, DocumentStore } from '../store/sqlite/documents.js';
import type { ProjectStore } from '../store/sqlite/projects.js';
import type { FileStore } from './file-store.js';
import type { DocumentType } from './types.js';

/** A file streamed to the file store's temp folder, hashed and typed. */
export interface ReceivedFile {
  tempPath: string;
  filename: string;
  contentType: DocumentType;
  sizeBytes: number;
  sha256: string;
  /** The relative path it was uploaded from: a ready upload replaces the older document at the same path. */
  path?: string | null;
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
  now: Clock;
  /** Wakes the ingest worker. */
  notify: () => void;
}

const TERMINAL = new Set(['ready', 'failed']);

/**
 * A replaced document's chunks stay this long after the swap: a search that started before it still reads them
 * (retrieval, then hydration). Searches take a few seconds at most (the reranker's deadline is 2 s).
 */
export const REPLACED_GRACE_MS = 15_000;

export class DocumentService {
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  constructor(private readonly deps: DocumentServiceDeps) {}

  /**
   * Stores each file under its hash and queues a document for it, in order. Bytes already in the project give
   * back the existing document with `duplicate: true` (nothing re-embedded). Temp files are consumed.
   */
  async accept(userId: string, projectId: string, files: ReceivedFile[], metadata: Record<string, unknown>): Promise<AcceptedDocument[]> {
    const out: AcceptedDocument[] = [];
    for (const f of files) {
      out.push(
        await this.deps.files.withLock(f.sha256, async () => {
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
            });
          } catch (err) {
            if ((await this.deps.documents.countBySha(f.sha256)) === 0) await this.deps.files.remove(f.sha256);
            throw err;
          }
        }),
      );
    }
    if (out.some((d) => !d.duplicate)) this.deps.notify();
    return out;
  }

  /** Deletes a user's document; false when it is not theirs or does not exist. */
  async delete(userId: string, id: string): Promise<boolean> {
    const doc = await this.deps.documents.get(userId, id);
    if (!doc) return false;
    // Chunks first: once the row is gone nothing points at them, and search must stop finding them now.
    await this.deps.chunks.deleteDocument(doc.id);
    await this.deps.documents.delete(userId, doc.id);
    await this.release(doc.sha256);
    this.settled(doc.id);
    return true;
  }

  /** Deletes a project with its documents, their chunks and (unshared) originals. */
  async removeProject(userId: string, projectId: string): Promise<void> {
    const docs = await this.deps.documents.listInProject(userId, projectId);
    await this.deps.chunks.deleteProject(projectId);
    await this.deps.projects.delete(userId, projectId); // documents and jobs cascade
    for (const sha of new Set(docs.map((d) => d.sha256))) await this.release(sha);
    for (const d of docs) this.settled(d.id);
  }

  private async release(sha256: string): Promise<void> {
    await this.deps.files.withLock(sha256, async () => {
      if ((await this.deps.documents.countBySha(sha256)) === 0) await this.deps.files.remove(sha256);
    });
  }

  /** Shutdown: every wait returns now with the current state, and later waits do not start. */
  stopWaiting(): void {
    this.stopped = true;
    for (const wake of this.waiters) wake();
  }

  /** The worker calls this when a document reached ready or failed. */
  settled(_documentId: string): void {
    for (const wake of this.waiters) wake();
    // Already hidden from search; removed once searches that began before the swap are done. A failed removal
    // is retried at the next settle, so nothing is lost.
    const remove = () => this.removeReplaced().catch(() => undefined);
    void remove();
    setTimeout(remove, REPLACED_GRACE_MS + 100).unref();
  }

  /** Deletes documents a newer version at their path replaced more than the grace period ago (chunks, rows, unshared files). */
  private async removeReplaced(): Promise<void> {
    for (const d of await this.deps.documents.listReplaced(this.deps.now() - REPLACED_GRACE_MS)) await this.delete(d.userId, d.id);
  }

  /**
   * Resolves with the documents once each is ready or failed (or deleted), or with their current state when
   * `timeoutMs` runs out; `settled` says which.
   */
  async waitSettled(userId: string, ids: string[], timeoutMs: number): Promise<{ documents: DocumentRecord[]; settled: boolean }> {
    const deadline = this.deps.now() + timeoutMs;
    for (;;) {
      const docs = await this.deps.documents.getMany(userId, ids);
      const done = docs.every((d) => TERMINAL.has(d.status));
      const left = deadline - this.deps.now();
      if (done || left <= 0 || this.stopped) return { documents: ids.map((id) => docs.find((d) => d.id === id)).filter((d) => d !== undefined), settled: done };
      // Woken by the worker; the poll is a safety net for progress made elsewhere.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, Math.min(left, 1000));
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
