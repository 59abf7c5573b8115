import type { Kysely } from 'kysely';

/**
 * Languages (issue 59, docs/search.md#languages), all nullable text holding ISO 639-1 codes:
 * - `documents.language`: the language most of its chunks are in, recorded when it becomes ready (null before, and
 *   for documents made ready before this migration until the background analysis reaches them);
 * - `documents.language_setting`: the language its upload, source or project set it to (null: detected per chunk);
 * - `projects.language`, `sources.language`: the language their documents are set to (null: detected).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('language', 'text').execute();
  await db.schema.alterTable('documents').addColumn('language_setting', 'text').execute();
  await db.schema.alterTable('projects').addColumn('language', 'text').execute();
  await db.schema.alterTable('sources').addColumn('language', 'text').execute();
}
