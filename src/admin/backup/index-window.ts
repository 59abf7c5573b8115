/**
 * What changed between a backup's database snapshot and its index pin (backup.ts), brought into the snapshot's copy
 * so that the two agree. The daemons go on serving in between, and two changes reach the index there before the
 * database:
 *
 * - a deletion removes a document's rows, then its record: a document the snapshot has as ready, whose rows the
 *   pinned chunks table lacks, was deleted in the window. Restored as it is, it would be a ready document without
 *   chunks, which no search finds; it is left out instead (its jobs go with it), as if deleted before the snapshot;
 * - a move updates the record, then the rows (in one commit): a ready document whose rows are under another project
 *   than its record was moved in the window (the record had it there first); the record follows its rows.
 *
 * Nothing else removes or rewrites a ready document's rows: a re-index builds a new table, and backup.ts refuses a
 * pin that a switch to one straddles; ingestion writes rows only for documents not yet ready.
 */
import { CliError } from '../../terminal/errors.js';
import type { VectorStore } from '../../store/lancedb/connection.js';
import { type DocumentRows, documentRowsAt, type PinnedTable } from '../../store/lancedb/version-pins.js';
import { openSqlite } from '../../store/sql/sqlite.js';

export interface WindowChanges {
  /** Documents deleted in the window: not in the backup. */
  deleted: string[];
  /** Documents moved to another project in the window: in the backup under that project. */
  moved: string[];
}

/** Rows deleted (with what cascades from them) per statement. */
const BATCH = 500;

/** Brings the snapshot at `snapshot` in line with the chunks table `chunks` as pinned (none: no table yet). */
export async function applyWindowChanges(snapshot: string, vectors: VectorStore, chunks: PinnedTable | undefined): Promise<WindowChanges> {
  const rows = chunks ? await documentRowsAt(vectors, chunks) : new Map<string, DocumentRows>();
  // Foreign keys are on: a document's jobs go with it.
  const handle = await openSqlite(snapshot, { migrate: false });
  try {
    const { db } = handle;
    const ready = await db.selectFrom('documents').select(['id', 'project_id', 'chunk_count']).where('status', '=', 'ready').execute();
    const deleted: string[] = [];
    const moved: { id: string; project: string }[] = [];
    for (const doc of ready) {
      const got = rows.get(doc.id);
      if ((got?.rows ?? 0) < doc.chunk_count) deleted.push(doc.id);
      else if (got && got.project !== doc.project_id) moved.push({ id: doc.id, project: got.project });
    }
    for (let i = 0; i < deleted.length; i += BATCH) await db.deleteFrom('documents').where('id', 'in', deleted.slice(i, i + BATCH)).execute();
    for (const { id, project } of moved) {
      // A project made in the window, or a document of the same content there that the snapshot still has: this
      // snapshot cannot hold the move, a later one will.
      await db
        .updateTable('documents')
        .set({ project_id: project })
        .where('id', '=', id)
        .execute()
        .catch((err: unknown) => {
          throw new CliError(`document ${id} moved to project ${project} as the backup began, and the database snapshot cannot show it there (${(err as Error).message})`, 1, 'run the backup again');
        });
    }
    return { deleted: deleted.sort(), moved: moved.map((m) => m.id).sort() };
  } finally {
    await handle.close();
  }
}
