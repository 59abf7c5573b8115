import { type Kysely, sql } from 'kysely';

/**
 * `documents.attached_to`: the e-mail a document was attached to (issue 41), or null. An attachment is a document of
 * its own in its message's project; deleting the message deletes it (DocumentService.delete, which also removes
 * chunks and originals, so no foreign key cascade here), and `upload --sync` leaves it to its message.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('attached_to', 'text').execute();
  await sql`CREATE INDEX documents_attached_to ON documents (attached_to) WHERE attached_to IS NOT NULL`.execute(db);
}
