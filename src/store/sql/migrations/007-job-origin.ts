import type { Kysely } from 'kysely';

/**
 * Shared mode: the replica that accepted a job's upload and keeps its original on its own disk (RecentOriginals).
 * A claim prefers the claiming replica's own jobs, so the original is read from that copy rather than fetched back
 * from the object store (a GET: CPU in the replica and the store, and a round trip, per document). Null where one
 * process serves the queue (embedded mode) and for jobs queued by anything but an upload.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('origin', 'text').execute();
  await db.schema.createIndex('jobs_origin_claim').on('jobs').columns(['user_id', 'origin', 'state', 'run_after', 'id']).execute();
}
