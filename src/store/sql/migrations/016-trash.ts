import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * The trash (issue 53): a deleted document keeps its row, chunks and original, marked `trashed_at` (and by whom,
 * `trashed_by`), until it is restored, purged, or its retention (`--trash-days`) runs out. A trashed document is
 * out of search, lists and counts at once; the index finds the trash of a project, and the oldest entries to purge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('documents').addColumn('trashed_at', d.int64).execute();
  await db.schema.alterTable('documents').addColumn('trashed_by', 'text').execute();
  await sql`CREATE INDEX documents_trash ON documents (trashed_at, project_id) WHERE trashed_at IS NOT NULL`.execute(db);
}
