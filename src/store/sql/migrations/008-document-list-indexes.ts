import { type Kysely, sql } from 'kysely';

/**
 * Indexes for a library of 100,000 documents and more, where each listing used to read and sort every document of
 * the user. The document list in each of its orders (upload = id, name, size; by status too) reads one page of an
 * index instead (before and after at 100,000 documents: bench/results/search.md). The projects' counts (documents,
 * chunks, bytes per project) read a covering index instead of the rows.
 * (user_id, status, id) serves everything (user_id, status) did, so that one goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX documents_user_order ON documents (user_id, id)`.execute(db);
  await sql`CREATE INDEX documents_user_name ON documents (user_id, lower(filename), id)`.execute(db);
  await sql`CREATE INDEX documents_user_size ON documents (user_id, size_bytes, id)`.execute(db);
  await sql`CREATE INDEX documents_user_status_order ON documents (user_id, status, id)`.execute(db);
  await sql`DROP INDEX documents_user_status`.execute(db);
  await sql`CREATE INDEX documents_user_project_counts ON documents (user_id, project_id, chunk_count, size_bytes)`.execute(db);
}
