import { CompiledQuery, type Kysely, type QueryId, type RootOperationNode } from 'kysely';
import { dialectOf } from '../../src/store/sql/dialect.js';
import type { Database } from '../../src/store/sql/schema.js';

/**
 * SQLite's plan of each statement `run` sends through the database it is given (EXPLAIN QUERY PLAN's lines, one list
 * per statement). SQLite picks indexes by rules, not statistics, so a plan on a small test table is the plan at any
 * size: a test can hold a query to the index it was written for. On PostgreSQL `run` runs and there are no plans
 * (its planner weighs indexes by statistics).
 */
export async function sqlitePlans(db: Kysely<Database>, run: (watched: Kysely<Database>) => Promise<unknown>): Promise<string[][] | null> {
  const asked: { node: RootOperationNode; queryId: QueryId }[] = [];
  await run(db.withPlugin({ transformQuery: (q) => (asked.push(q), q.node), transformResult: async (r) => r.result }));
  if (dialectOf(db).engine !== 'sqlite') return null;
  const plans: string[][] = [];
  for (const { node, queryId } of asked) {
    const query = db.getExecutor().compileQuery(node, queryId);
    const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
    plans.push(plan.rows.map((r) => r.detail));
  }
  return plans;
}
