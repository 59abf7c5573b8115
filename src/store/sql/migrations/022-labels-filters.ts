import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Filters, labels and saved searches (issue 60, docs/api.md#filters):
 * - `labels`: a project's vocabulary, each name once (any case) with a colour; `document_labels` puts them on
 *   documents. A label goes with its project, and off every document with it.
 * - `document_metadata`: each document's metadata as the filters read it (core/metadata-entries.ts): one row per
 *   dotted key (value null) and per value compared, with a number's value and a date's moment for ranges. Filled here
 *   for the documents already stored.
 * - `saved_searches`: a person's named query with its filters, shared with a project's members when `project_id` is
 *   set.
 * - `sources.labels`: the labels (names, a JSON array) a source puts on every document it brings.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('labels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await d.uniqueIndexIgnoringCase('labels_project_name', 'labels', ['project_id'], 'name').execute(db);

  // One key column (`<document>:<label>`), as every table has: `migrate` and backups page tables by it.
  await db.schema
    .createTable('document_labels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('label_id', 'text', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('document_labels_label').on('document_labels').columns(['label_id', 'document_id']).execute();
  await db.schema.createIndex('document_labels_document').on('document_labels').columns(['document_id', 'label_id']).execute();

  await db.schema
    .createTable('document_metadata')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('number', d.double)
    .addColumn('moment', d.int64)
    .execute();
  await db.schema.createIndex('document_metadata_document').on('document_metadata').columns(['document_id', 'key']).execute();
  await db.schema.createIndex('document_metadata_value').on('document_metadata').columns(['key', 'value', 'document_id']).execute();
  await db.schema.createIndex('document_metadata_number').on('document_metadata').columns(['key', 'number', 'document_id']).execute();
  await db.schema.createIndex('document_metadata_moment').on('document_metadata').columns(['key', 'moment', 'document_id']).execute();

  await db.schema
    .createTable('saved_searches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('search', 'text', (c) => c.notNull())
    .addColumn('created_at', d.int64, (c) => c.notNull())
    .addColumn('updated_at', d.int64, (c) => c.notNull())
    .execute();
  await d.uniqueIndexIgnoringCase('saved_searches_user_name', 'saved_searches', ['user_id'], 'name').execute(db);
  await db.schema.createIndex('saved_searches_project').on('saved_searches').columns(['project_id']).execute();

  await db.schema.alterTable('sources').addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]')).execute();

  // The metadata of documents already stored, a page at a time. Its rows' module (with zod, ~0.1 s) is loaded here:
  // every opening of a database imports the migrations, and an operator command opens one to run a query.
  const { metadataRows } = await import('../document-filters.js');
  let after = '';
  for (;;) {
    const docs = (await db.selectFrom('documents').select(['id', 'metadata']).where('id', '>', after).orderBy('id').limit(500).execute()) as { id: string; metadata: string }[];
    if (docs.length === 0) break;
    const rows = docs.flatMap((doc) => metadataRows(doc.id, parsedMetadata(doc.metadata)));
    for (let i = 0; i < rows.length; i += 1000) await db.insertInto('document_metadata').values(rows.slice(i, i + 1000)).execute();
    after = docs.at(-1)!.id;
  }
}

/** A stored metadata column as an object (it always is one; anything else has no entries). */
function parsedMetadata(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
