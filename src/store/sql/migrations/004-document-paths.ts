import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * The relative path a document was uploaded from (`upload --sync`), the newer document that replaced it and when,
 * and when a document became ready. A replaced row is hidden from search and lists in the same transaction that
 * marks its successor ready, then deleted with its chunks and file. The two times let a search that started
 * before the swap keep seeing the old version, and one that started after see the new one. Times are `int64`
 * (bigint on PostgreSQL; the same SQLite schema as released).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema.alterTable('documents').addColumn('path', 'text').execute();
  await db.schema.alterTable('documents').addColumn('replaced_by', 'text').execute();
  await db.schema.alterTable('documents').addColumn('replaced_at', d.int64).execute();
  await db.schema.alterTable('documents').addColumn('ready_at', d.int64).execute();
  await sql`CREATE INDEX documents_project_path ON documents (project_id, path) WHERE path IS NOT NULL`.execute(db);
  await sql`CREATE INDEX documents_replaced ON documents (replaced_by) WHERE replaced_by IS NOT NULL`.execute(db);
}
