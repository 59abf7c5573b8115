import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Dialect-aware since PostgreSQL joined (the SQLite schema it makes is unchanged): times and sizes are `int64`,
 * progress a double, and the jobs' id an identity column on PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', d.int64, (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('progress', d.double, (c) => c.notNull().defaultTo(0))
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pages', 'integer')
    .addColumn('warnings', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('error', 'text')
    .addColumn('embedder_id', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX documents_project_sha ON documents (project_id, sha256)`.execute(db);
  await db.schema.createIndex('documents_user_status').on('documents').columns(['user_id', 'status']).execute();
  await db.schema.createIndex('documents_sha').on('documents').column('sha256').execute();

  await d
    .identityColumn(db.schema.createTable('jobs'), 'id')
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', d.int64, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', d.int64)
    .addColumn('last_error', 'text')
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_claim').on('jobs').columns(['state', 'run_after']).execute();
}
