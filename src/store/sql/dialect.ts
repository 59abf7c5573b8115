import { type CreateTableBuilder, type Expression, type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely';
import { spellings } from '../../core/name-spellings.js';
import type { Database } from './schema.js';

/** The two engines behind one schema: SQLite (embedded mode) and PostgreSQL (shared mode). */
export type Engine = 'sqlite' | 'postgresql';

/**
 * What differs between SQLite and PostgreSQL, named once (as Grafana's migrator does): column types, row locks,
 * case-insensitive comparison, error classes. Migrations and stores ask this object, never the engine's name.
 *
 * Both engines keep 0/1 integer flags (`is_default`, `is_public`, `released`) and JSON as text: one code path,
 * and the SQLite schema of released migrations stays as it was.
 */
export interface SqlDialect {
  engine: Engine;
  /**
   * Column type of epoch-millisecond times (and byte sizes): SQLite's INTEGER holds 64 bits, PostgreSQL's
   * `integer` only 32, so `bigint` there (read back as a number: see postgres.ts; milliseconds fit in 2^53).
   */
  int64: 'integer' | 'bigint';
  /** A fraction (progress): SQLite's REAL is a double; PostgreSQL's `real` is single precision. */
  double: 'real' | 'double precision';
  /** Adds an auto-numbered primary key: SQLite's INTEGER PRIMARY KEY AUTOINCREMENT, a bigint identity column on PostgreSQL. */
  identityColumn<T extends string>(table: CreateTableBuilder<T, any>, column: string): CreateTableBuilder<T, any>;
  /**
   * After rows were written with their own values in an identity column (a library moved here): the statement
   * that moves the column's counter past them, so the next row numbered by the database does not collide; null
   * where the engine does that itself (SQLite's AUTOINCREMENT keeps the highest id ever inserted).
   */
  identityPast(table: string, column: string): RawBuilder<unknown> | null;
  /**
   * Whether a transaction must lock the rows it reads in order to consume them (`FOR UPDATE`): on PostgreSQL
   * under READ COMMITTED two transactions may read the same row at once. SQLite has one writer and Kysely runs
   * a transaction on its single connection, so transactions never interleave and there is nothing to lock.
   */
  lockRows: boolean;
  /**
   * Whether INSERT, UPDATE and DELETE may appear inside WITH, so that one statement writes several tables
   * (PostgreSQL's data-modifying CTEs; SQLite allows only SELECT there). Shared mode's busiest writes use it:
   * each statement is a round trip to a server, and one statement needs no BEGIN and COMMIT around it,
   * where SQLite's transactions run in-process and cost nothing extra.
   */
  writesInWith: boolean;
  /**
   * `column = value`, ignoring ASCII case: exactly what the unique indexes on users' emails and project names
   * compare (SQLite's NOCASE folds A–Z only; PostgreSQL's `lower()` under the "C" collation does the same,
   * whatever the database's locale), and written so that each engine uses that index.
   */
  equalsIgnoreCase(column: string, value: string): RawBuilder<boolean>;
  /**
   * `column` equal to any of `values` as equalsIgnoreCase compares, in searches of the same index: SQLite plans
   * `c = ? COLLATE NOCASE or c = ? COLLATE NOCASE` as a scan of the whole table, `c COLLATE NOCASE in (?, ?)` as
   * searches of the index.
   */
  equalsAnyIgnoringCase(column: string, values: readonly [string, ...string[]]): RawBuilder<boolean>;
  /**
   * The unique index that comparison uses: `leading` columns (a fixed list, written as given) then `column`
   * ignoring ASCII case. Names are constants of a migration, never input.
   */
  uniqueIndexIgnoringCase(index: string, table: string, leading: string[], column: string): RawBuilder<unknown>;
  /**
   * A text column ordered and compared by its code points, as SQLite's BINARY collation does: on PostgreSQL under
   * the "C" collation, whatever the database's locale, so a sorted list reads the same on both engines; `lower()`
   * of it folds ASCII only on both. For small lists and ones sorted anyway: an index in the database's collation
   * cannot order it.
   */
  bytewise(column: string): RawBuilder<string>;
  /**
   * The column, in a form the planner will not pick an index for. SQLite's unary `+` does that (see
   * DocumentStore.getMany); PostgreSQL's planner weighs indexes by statistics and needs no hint.
   */
  withoutIndex(column: string): Expression<string>;
  /**
   * `column IN (values)` with the values bound as one parameter: a JSON array read by `json_each` on SQLite, an
   * array on PostgreSQL. A search asks for 400–1,200 candidate documents at once; bound one by one they took more than twice
   * as long on the daemon's only thread as one JSON array (bench/results/search.md).
   */
  inValues(column: string, values: readonly string[]): RawBuilder<boolean>;
  /** A unique index or primary key refused the row. */
  isUniqueViolation(err: unknown): boolean;
}

const SQLITE: SqlDialect = {
  engine: 'sqlite',
  int64: 'integer',
  double: 'real',
  identityColumn: (table, column) => table.addColumn(column, 'integer', (c) => c.primaryKey().autoIncrement()),
  identityPast: () => null,
  lockRows: false,
  writesInWith: false,
  equalsIgnoreCase: (column, value) => sql<boolean>`${sql.ref(column)} = ${value} COLLATE NOCASE`,
  equalsAnyIgnoringCase: (column, values) => sql<boolean>`${sql.ref(column)} COLLATE NOCASE in (${sql.join(values)})`,
  // Raw text, so that sqlite_master keeps the very statement released migrations wrote.
  uniqueIndexIgnoringCase: (index, table, leading, column) =>
    sql.raw(`CREATE UNIQUE INDEX ${index} ON ${table} (${[...leading, `${column} COLLATE NOCASE`].join(', ')})`),
  bytewise: (column) => sql<string>`${sql.ref(column)}`,
  withoutIndex: (column) => sql<string>`+${sql.ref(column)}`,
  inValues: (column, values) => sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`,
  isUniqueViolation: (err) => {
    const code = (err as { code?: unknown })?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
};

const POSTGRES: SqlDialect = {
  engine: 'postgresql',
  int64: 'bigint',
  double: 'double precision',
  identityColumn: (table, column) => table.addColumn(column, 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()),
  identityPast: (table, column) =>
    sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.ref(column)}), 0) + 1, false) from ${sql.table(table)}`,
  lockRows: true,
  writesInWith: true,
  equalsIgnoreCase: (column, value) => sql<boolean>`lower(${sql.ref(column)} COLLATE "C") = lower(cast(${value} as text) COLLATE "C")`,
  equalsAnyIgnoringCase: (column, values) => sql<boolean>`lower(${sql.ref(column)} COLLATE "C") in (${sql.join(values.map((v) => sql`lower(cast(${v} as text) COLLATE "C")`))})`,
  uniqueIndexIgnoringCase: (index, table, leading, column) =>
    sql.raw(`CREATE UNIQUE INDEX ${index} ON ${table} (${[...leading, `(lower(${column} COLLATE "C"))`].join(', ')})`),
  bytewise: (column) => sql<string>`${sql.ref(column)} COLLATE "C"`,
  withoutIndex: (column) => sql.ref(column),
  inValues: (column, values) => sql<boolean>`${sql.ref(column)} = any(cast(${values} as text[]))`,
  // SQLSTATE 23505 unique_violation.
  isUniqueViolation: (err) => (err as { code?: unknown })?.code === '23505',
};

/**
 * The dialect of a database handle or of a transaction on it. Kysely marks `getExecutor()` internal, but every
 * Kysely instance and Transaction has one and its adapter is what both engines' drivers differ by; reading it
 * here keeps the engine out of every store's constructor (test/store/dialect.test.ts holds it to both engines).
 */
export function dialectOf(db: Kysely<any>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? POSTGRES : SQLITE;
}

/**
 * A name equal to `value` in any case of A–Z (equalsIgnoreCase) and in either Unicode spelling (core/name-spellings.ts):
 * names are stored composed, but a library may hold decomposed ones written before, and those must not become twins.
 */
export function equalsName(d: SqlDialect, column: string, value: string): Expression<boolean> {
  const [nfc, nfd] = spellings(value);
  // Both spellings in one IN: as an OR, SQLite scanned the whole table (users, groups) instead of searching the index.
  return nfd === undefined ? d.equalsIgnoreCase(column, nfc!) : d.equalsAnyIgnoringCase(column, [nfc!, nfd]);
}

/**
 * Whether `userId` has a project or saved search (other than `except`) of this name, in any case of A–Z and either
 * spelling: their unique indexes compare bytes, and would not see a decomposed name stored before names were composed.
 */
export async function nameHeld(db: Kysely<Database>, table: 'projects' | 'saved_searches', userId: string, name: string, except?: string): Promise<boolean> {
  const row = await db
    .selectFrom(table)
    .select('id')
    .where('user_id', '=', userId)
    .where(equalsName(dialectOf(db), 'name', name))
    .$if(except !== undefined, (q) => q.where('id', '!=', except!))
    .executeTakeFirst();
  return row !== undefined;
}
