import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { openSqlite } from '../../src/store/sql/sqlite.js';

/** The embedded database keeps the statements it prepared (src/store/sql/sqlite.ts): kept ones must stay right. */
const dir = mkdtempSync(join(tmpdir(), 'docsearch-statements-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('answers a kept statement with the schema as it is now, and with each call its own parameters', async () => {
  const handle = await openSqlite(join(dir, 'a.db'), { migrate: false });
  const db = handle.db;
  try {
    await sql`create table t (a integer)`.execute(db);
    await sql`insert into t (a) values (1), (2)`.execute(db);
    const all = () => sql<Record<string, number>>`select * from t order by a`.execute(db).then((r) => r.rows);
    const one = (a: number) => sql<{ a: number }>`select a from t where a = ${a}`.execute(db).then((r) => r.rows);
    expect(await all()).toEqual([{ a: 1 }, { a: 2 }]);
    expect(await one(1)).toEqual([{ a: 1 }]);
    expect(await one(2)).toEqual([{ a: 2 }]);
    // The same text after the table changed: SQLite compiles the kept statement again (`select *` gains the column).
    await sql`alter table t add column b integer default 7`.execute(db);
    expect(await all()).toEqual([{ a: 1, b: 7 }, { a: 2, b: 7 }]);
    await sql`drop table t`.execute(db);
    await expect(all()).rejects.toThrow(/no such table/);
    // More distinct statements than are kept: the oldest are dropped and prepared again when asked for.
    for (let i = 0; i < 300; i++) expect((await sql<{ v: number }>`select ${sql.raw(String(i))} as v`.execute(db)).rows).toEqual([{ v: i }]);
    expect((await sql<{ v: number }>`select 0 as v`.execute(db)).rows).toEqual([{ v: 0 }]);
  } finally {
    await handle.close();
  }
});
