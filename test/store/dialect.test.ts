import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { dialectOf } from '../../src/store/sql/dialect.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

describeEachEngine('dialect', ({ engine, handle }) => {
  it('is recognised on a handle and inside a transaction on it', async () => {
    const { db } = handle();
    expect(dialectOf(db).engine).toBe(engine);
    expect(await db.transaction().execute(async (trx) => dialectOf(trx).engine)).toBe(engine);
    expect(handle().engine).toBe(engine);
  });

  // No column holds an integer past 2^53 (times are milliseconds, sizes bytes): PostgreSQL's driver refuses one, and
  // better-sqlite3 (without safeIntegers) reads it rounded, as this says.
  it('reads 64-bit integers as numbers; past 2^53 PostgreSQL refuses one and SQLite rounds it', async () => {
    const { db } = handle();
    const ms = await sql<{ n: number }>`select cast(${'4102444800000'} as bigint) as n`.execute(db);
    expect(ms.rows[0]!.n).toBe(4_102_444_800_000); // 2100-01-01 in epoch milliseconds
    const big = sql<{ n: number }>`select cast('9007199254740993' as bigint) as n`.execute(db);
    if (engine === 'postgresql') await expect(big).rejects.toThrow(RangeError);
    else expect((await big).rows[0]!.n).toBe(9_007_199_254_740_992);
  });

  it('matches a column against a list of values bound as one parameter', async () => {
    const { db } = handle();
    const { inValues } = dialectOf(db);
    const values = ["o'brien", 'naïve "quoted"', '[1,2]', 'a,b', ...Array.from({ length: 2000 }, (_, i) => `v${i}`)];
    const rows = await sql<{ v: string }>`select v from (select ${"o'brien"} as v union all select ${'a,b'} union all select ${'v1999'} union all select ${'v2000'} union all select ${'A,B'}) t where ${inValues('v', values)} order by v`.execute(db);
    expect(rows.rows.map((r) => r.v)).toEqual(["o'brien", 'a,b', 'v1999'].sort());
    const none = await sql<{ v: string }>`select v from (select ${'x'} as v) t where ${inValues('v', [])}`.execute(db);
    expect(none.rows).toEqual([]);
  });
});
