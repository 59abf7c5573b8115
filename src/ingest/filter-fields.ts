/**
 * The backfill's deriver for the chunks' document fields (filters: store/lancedb/chunk-schema.ts DocumentFields): rows
 * written before they were recorded get their document's type, upload time, path, source, labels and metadata, as
 * ingestion writes them today (write.ts `documentFields`). A row whose document is gone (its rows not swept yet) gets
 * an empty type, which no filter matches, so it is not pending again.
 *
 * The values come from the database, not from the row: a label change that lands between this read and the write is
 * carried by the label change's own update only if it runs after; the next change of the document's labels sets them
 * again (documents/labels.ts).
 */
import { DOCUMENT_FIELD_COLUMNS } from '../store/lancedb/chunk-schema.js';
import type { DocumentStore } from '../store/sql/documents.js';
import type { LabelStore } from '../store/sql/labels.js';
import type { ChunkDeriver } from './backfill.js';
import { documentFields } from './write.js';

export function documentFieldsDeriver(deps: { documents: Pick<DocumentStore, 'anyMany'>; labels: Pick<LabelStore, 'ofDocuments'> }): ChunkDeriver {
  return {
    name: 'filters',
    reads: ['document_id'],
    writes: DOCUMENT_FIELD_COLUMNS,
    pending: 'content_type IS NULL',
    batchRows: 512,
    async derive(rows) {
      const ids = [...new Set(rows.map((r) => r.document_id as string))];
      const [docs, labels] = await Promise.all([deps.documents.anyMany(ids), deps.labels.ofDocuments(ids)]);
      const byId = new Map(docs.map((d) => [d.id, d]));
      return rows.map((r) => {
        const doc = byId.get(r.document_id as string);
        if (!doc) return { content_type: '', labels: [], meta: [] };
        const fields = documentFields(
          doc,
          (labels.get(doc.id) ?? []).map((l) => l.id),
          doc.metadata,
        );
        return { ...fields, uploaded_at: BigInt(fields.uploaded_at) };
      });
    },
  };
}
