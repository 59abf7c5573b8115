import type { Kysely } from 'kysely';

/**
 * A job handed back unfinished (graceful shutdown, full disk) does not count the claim as an attempt, so the
 * attempt number can no longer tell its next run that rows of an earlier run may exist. `released` does: a run
 * of a released job clears the document's chunks before writing, as a retry after a crash does.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('released', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
