import type { Kysely } from 'kysely';

/**
 * OCR languages a document is read in (issue 59, docs/ingest.md#ocr), Tesseract codes joined by "+" ("deu+eng"):
 * - `documents.ocr_languages`: its upload's `ocr_languages` field, else its project's setting when it was uploaded
 *   (null: the operator's `--ocr-languages`);
 * - `projects.ocr_languages`: the setting its uploads get (null: the operator's).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('ocr_languages', 'text').execute();
  await db.schema.alterTable('projects').addColumn('ocr_languages', 'text').execute();
}
