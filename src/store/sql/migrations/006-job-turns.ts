import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * When each user was last served a job, as a turn number (one more than the latest): the claim picks the user
 * served least recently, so one user's 500 files do not starve another's one. A table rather than memory, so the
 * rotation holds across every process claiming from one queue (shared mode) and across restarts. A user gets a
 * row (turn 0) with their first job; the index finds a user's oldest runnable job without scanning the queue.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const d = dialectOf(db);
  await db.schema
    .createTable('job_turns')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('turn', d.int64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_user_claim').on('jobs').columns(['user_id', 'state', 'run_after', 'id']).execute();
  // Users with jobs already queued (a database from before this migration) take their first turn.
  await sql`INSERT INTO job_turns (user_id, turn) SELECT DISTINCT j.user_id, 0 FROM jobs j JOIN users u ON u.id = j.user_id`.execute(db);
}
