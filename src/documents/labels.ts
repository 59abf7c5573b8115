/**
 * Labels on documents and the projects' vocabularies, with what their chunks carry kept in step: every change is
 * made in the database, then each changed document's chunks get its labels as the database now has them, in one
 * commit per set of labels (search filters on the chunks' `labels` column: store/lancedb/chunk-filter.ts). The
 * caller decided who may (access/: viewers see labels, editors set them).
 *
 * Chunk updates run one at a time across the library (a lock), each reading the labels it writes inside the lock,
 * so the last one to run writes the latest state whatever order two changes raced in. A document still being
 * indexed gets its chunks' labels from the worker, which checks them again once it is ready (ingest/worker.ts).
 */
import type { AuditLog } from '../core/audit.js';
import { conflict, notFound } from '../core/errors.js';
import type { Locks } from '../store/coordination.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentRecord } from '../store/sql/documents.js';
import type { Label, LabelColor, LabelStore } from '../store/sql/labels.js';
import type { SavedSearchStore } from '../store/sql/saved-searches.js';

export interface LabelServiceDeps {
  labels: LabelStore;
  savedSearches: Pick<SavedSearchStore, 'renameLabel'>;
  chunks: Pick<ChunkIndex, 'setDocumentFields'>;
  locks: Locks;
  audit: AuditLog;
}

const CHUNK_LABELS_LOCK = 'chunk-labels';

export class LabelService {
  constructor(private readonly deps: LabelServiceDeps) {}

  /** A new label in a project's vocabulary; 409 when it has one of that name (any case). */
  async create(projectId: string, name: string, color?: LabelColor): Promise<Label> {
    const label = await this.deps.labels.create(projectId, name, color);
    if (!label) throw await this.taken(projectId, name);
    await this.deps.audit.record({ type: 'label.created', target: { type: 'label', id: label.id, label: label.name }, details: { project_id: projectId, color: label.color } });
    return label;
  }

  /**
   * Renames or recolours a label (documents keep it: they carry its id; saved searches over its project alone are
   * given its new name); 409 when the name is taken in its project.
   */
  async update(label: Label, patch: { name?: string; color?: LabelColor }): Promise<Label> {
    const updated = await this.deps.labels.update(label.id, patch);
    if (updated === null) throw notFound('label');
    if (updated === 'conflict') throw await this.taken(label.projectId, patch.name!);
    if (updated.name !== label.name) await this.deps.savedSearches.renameLabel(label.projectId, label.name, updated.name);
    await this.deps.audit.record({
      type: 'label.changed',
      target: { type: 'label', id: label.id, label: updated.name },
      details: { project_id: label.projectId, ...(patch.name !== undefined ? { from_name: label.name, name: updated.name } : {}), ...(patch.color !== undefined ? { color: updated.color } : {}) },
    });
    return updated;
  }

  /** The 409 for a name taken in any case of A–Z: it quotes the label as the project spells it, which is what to look for. */
  private async taken(projectId: string, name: string) {
    const held = await this.deps.labels.byName(projectId, name);
    return conflict(`the project has a label "${held?.name ?? name}" already`);
  }

  /** Deletes a label: off every document that had it, their chunks too. */
  async delete(label: Label): Promise<void> {
    const documents = await this.deps.labels.delete(label.id);
    if (documents === null) throw notFound('label');
    await this.syncChunks(documents);
    await this.deps.audit.record({ type: 'label.deleted', target: { type: 'label', id: label.id, label: label.name }, details: { project_id: label.projectId, documents: documents.length } });
  }

  /**
   * Adds and takes off labels by name on documents (each name made in a document's project's vocabulary where
   * missing, when added); `set` makes a document's labels exactly those names. Their chunks carry the result.
   */
  async change(docs: readonly DocumentRecord[], change: { set?: readonly string[]; add?: readonly string[]; remove?: readonly string[] }): Promise<void> {
    if (docs.length === 0) return;
    const { labels } = this.deps;
    // A document moved since the caller read it (in the project it left) keeps its labels: not changed, not audited.
    const changed = new Set<string>();
    for (const [projectId, inProject] of groupBy(docs, (d) => d.projectId)) {
      const ids = inProject.map((d) => d.id);
      if (change.set) {
        const wanted = (await labels.ensure(projectId, change.set)).map((l) => l.id);
        for (const id of ids) if (await labels.set(id, wanted, projectId)) changed.add(id);
      }
      if (change.add?.length) for (const id of await labels.add(ids, (await labels.ensure(projectId, change.add)).map((l) => l.id), projectId)) changed.add(id);
      if (change.remove?.length) {
        const byName = await labels.idsByName([projectId], change.remove);
        for (const id of await labels.remove(ids, [...byName.values()].flat(), projectId)) changed.add(id);
      }
    }
    await this.syncChunks([...changed]);
    for (const doc of docs.filter((d) => changed.has(d.id))) {
      await this.deps.audit.record({
        type: 'document.labelled',
        target: { type: 'document', id: doc.id, label: doc.filename },
        details: { ...(change.set ? { set: [...change.set] } : {}), ...(change.add?.length ? { added: [...change.add] } : {}), ...(change.remove?.length ? { removed: [...change.remove] } : {}) },
      });
    }
  }

  /**
   * The labels a moved document keeps: the same names in its new project's vocabulary (made where missing), with any
   * it was given there meanwhile (LabelStore.carryOver decides in one transaction).
   */
  async carryOver(documentId: string, toProject: string): Promise<{ restore: () => Promise<void> }> {
    const { before } = (await this.deps.labels.carryOver(documentId, toProject)) ?? { before: [] };
    return {
      restore: async () => {
        await this.deps.labels.set(documentId, before);
      },
    };
  }

  /**
   * Runs `write` (a moved document's chunks written to their new project) with the document's labels as the database
   * has them now, read under the lock the chunks' label writes share: a label added meanwhile is either read here or
   * written by its own change after, never overwritten by labels read before it.
   */
  async withCurrentLabels(documentId: string, write: (labels: string[]) => Promise<void>): Promise<void> {
    await this.deps.locks.withLock(CHUNK_LABELS_LOCK, async () => {
      const now = await this.deps.labels.ofDocuments([documentId]);
      await write((now.get(documentId) ?? []).map((l) => l.id).sort());
    });
  }

  /** The documents' chunks get their labels as the database has them now: one commit per set of labels. */
  async syncChunks(documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.deps.locks.withLock(CHUNK_LABELS_LOCK, async () => {
      const now = await this.deps.labels.ofDocuments(documentIds);
      const bySet = groupBy([...new Set(documentIds)], (id) => (now.get(id) ?? []).map((l) => l.id).sort().join(','));
      for (const [set, ids] of bySet) await this.deps.chunks.setDocumentFields(ids, { labels: set ? set.split(',') : [] });
    });
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}
