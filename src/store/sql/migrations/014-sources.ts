import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Sources that keep a project current (issue 54): `sources` (one per folder, bucket, share, repository, site or
 * mailbox, with its schedule, its state and its credentials sealed under the operator's key), `source_items` (what
 * each pass saw of each item: its version, its bytes' hash, its document), and on `documents` the source a document
 * came from and its path there. A source goes with its project; its items go with it. A document keeps no foreign
 * key to its source: removing a source deletes or detaches its documents through DocumentService, which also removes
 * their chunks and originals.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('every_ms', d.int64, (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('secrets', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('paused_reason', 'text')
    .addColumn('confirm_deletions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cursor', 'text')
    .addColumn('pass', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('resume_after', 'text')
    .addColumn('next_sync_at', d.int64, (c) => c.notNull())
    .addColumn('requested_at', d.int64)
    .addColumn('syncing_since', d.int64)
    .addColumn('syncing_on', 'text')
    .addColumn('last_sync_at', d.int64)
    .addColumn('last_result', 'text')
    .addColumn('error', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sources_project').on('sources').column('project_id').execute();
  await sql`CREATE INDEX sources_due ON sources (next_sync_at) WHERE status = 'active'`.execute(db);

  // One key column (the library copy of `docsearch migrate` and backups pages tables by it): the source and the path.
  await db.schema
    .createTable('source_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('document_id', 'text')
    .addColumn('error', 'text')
    .addColumn('seen_in', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('source_items_document').on('source_items').columns(['source_id', 'document_id']).execute();

  await db.schema.alterTable('documents').addColumn('source_id', 'text').execute();
  await db.schema.alterTable('documents').addColumn('source_path', 'text').execute();
  await sql`CREATE INDEX documents_source ON documents (source_id) WHERE source_id IS NOT NULL`.execute(db);
}
