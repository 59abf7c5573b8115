import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { DatabaseHandle, Db } from '../../src/store/sql/database.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { waitFor } from './eventually.js';
import { newPostgresDatabase } from './store-dialects.js';

/** A new PostgreSQL database for the describe block: opened before its tests (`use` is given it and its URL), closed after. */
export function postgresBlock(use: (handle: DatabaseHandle, url: string) => void): void {
  let handle: DatabaseHandle | undefined;
  beforeAll(async () => {
    const url = await newPostgresDatabase();
    handle = await openPostgres(url);
    use(handle, url);
  });
  afterAll(async () => {
    await handle?.close();
  });
}

/**
 * Runs `action` while another connection holds `statements` in an open transaction (another replica's change, made
 * as this code makes it), and commits them once `action` waits on a lock they hold, or is done without waiting: what
 * makes a race between two replicas of one PostgreSQL database happen the same way every run.
 */
export async function whileHeld<T>(url: string, db: Db, statements: readonly [string, unknown[]][], action: () => Promise<T>): Promise<T> {
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    await other.query('begin');
    for (const [text, values] of statements) await other.query(text, values);
    let settled = false;
    const running = action().finally(() => (settled = true));
    running.catch(() => undefined);
    await waitFor(
      async () => {
        if (settled) return true;
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
        return rows[0]!.n > 0;
      },
      10_000,
      "the write to wait on the other replica's change, or to be done",
      { intervalMs: 20 },
    );
    await other.query('commit');
    return await running;
  } finally {
    await other.end();
  }
}
