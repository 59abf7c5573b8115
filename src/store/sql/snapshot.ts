/**
 * A consistent copy of a running library's database, taken while daemons write to it (`docsearch backup`), as a
 * SQLite file in either mode: the embedded database by `VACUUM INTO` (one read transaction: the copy is the
 * database as it was when that began, and writers are not held up); a PostgreSQL database by reading every
 * library table in one REPEATABLE READ READ ONLY transaction into a new SQLite database of this version's
 * schema (library-copy.ts copies the rows, as `migrate` does). Restoring into PostgreSQL copies them back.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { copyTable, LIBRARY_TABLES } from './library-copy.js';
import { lastApplied } from './migrations/index.js';
import { openSqlite } from './sqlite.js';

/** Copies the SQLite database at `from` into the new file `to`; returns when its read transaction began. */
export function snapshotSqlite(from: string, to: string, now: () => number = Date.now): number {
  const db = new BetterSqlite3(from, { readonly: true, fileMustExist: true, timeout: 10_000 });
  try {
    const at = now();
    db.prepare('VACUUM INTO ?').run(to);
    return at;
  } finally {
    db.close();
  }
}

/**
 * Copies every library table of a PostgreSQL database, as of one moment, into a new SQLite file; returns that moment.
 * The copy has the schema the database has (its last migration), not this build's: a library backed up before an
 * upgrade is restored as it was, and migrated forward then, data migrations included.
 */
export async function snapshotPostgres(from: Kysely<any>, to: string, now: () => number = Date.now): Promise<number> {
  const upTo = await lastApplied(from);
  const target = await openSqlite(to, upTo ? { upTo } : {});
  const present = new Set((await target.db.introspection.getTables()).map((t) => t.name));
  try {
    return await from
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        // The snapshot of a REPEATABLE READ transaction is taken at its first statement.
        const at = now();
        for (const table of LIBRARY_TABLES) if (present.has(table.name)) await copyTable(trx, target.db, table, { cutoff: at, batchRows: 1000 });
        return at;
      });
  } finally {
    await target.close();
  }
}
