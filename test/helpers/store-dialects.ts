import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import type { Engine } from '../../src/store/sql/dialect.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { openSqlite } from '../../src/store/sql/sqlite.js';
import { removeDir } from './daemon.js';
import { type PgCluster, postgresUnavailable, startPostgres } from './postgres.js';

/**
 * The store suites run on both engines: `describeEachEngine` repeats a describe block on a fresh SQLite file and
 * on a fresh PostgreSQL database. One PostgreSQL cluster serves the whole test file (started on first need,
 * stopped after the file); each suite gets its own database. Without PostgreSQL here, its half is skipped and
 * says why.
 */
export const ENGINES: readonly Engine[] = ['sqlite', 'postgresql'];

let cluster: Promise<PgCluster> | undefined;
const dirs: string[] = [];

afterAll(async () => {
  if (cluster) await (await cluster).destroy();
  for (const dir of dirs) removeDir(dir);
});

/** The file's PostgreSQL cluster (started on first call). */
export function testCluster(): Promise<PgCluster> {
  return (cluster ??= startPostgres());
}

/** A connection string to a new empty PostgreSQL database on the file's cluster. */
export async function newPostgresDatabase(password?: string): Promise<string> {
  return (await testCluster()).createDatabase(password);
}

/** A fresh, migrated database of the engine. */
export async function openFresh(engine: Engine): Promise<DatabaseHandle> {
  if (engine === 'postgresql') return openPostgres(await newPostgresDatabase());
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-store-'));
  dirs.push(dir);
  return openSqlite(join(dir, 'docsearch.db'));
}

export interface EngineSuite {
  engine: Engine;
  /** The suite's database (opened before its tests). */
  handle: () => DatabaseHandle;
  /**
   * Another handle on the same database, as another replica would have: a pool of its own on PostgreSQL. On
   * SQLite, the suite's handle again: one daemon serves a data directory, so every concurrent request goes
   * through its one connection (and better-sqlite3 waits for a lock synchronously, so two writing connections
   * in one test process would stall each other).
   */
  another: () => Promise<DatabaseHandle>;
}

/** Runs `body` once per engine, each on a database of its own. */
export function describeEachEngine(title: string, body: (suite: EngineSuite) => void): void {
  describe.each(ENGINES)(`${title} (%s)`, (engine) => {
    const skip = engine === 'postgresql' ? postgresUnavailable() : null;
    if (skip) {
      it.skip(`needs PostgreSQL: ${skip}`, () => undefined);
      return;
    }
    let handle: DatabaseHandle | undefined;
    let url: string | undefined;
    const extra: DatabaseHandle[] = [];
    beforeAll(async () => {
      if (engine === 'postgresql') {
        url = await newPostgresDatabase();
        handle = await openPostgres(url);
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'docsearch-store-'));
        dirs.push(dir);
        handle = await openSqlite(join(dir, 'docsearch.db'));
      }
    });
    afterAll(async () => {
      for (const h of extra) await h.close();
      await handle?.close();
    });
    body({
      engine,
      handle: () => handle!,
      another: async () => {
        if (!url) return handle!;
        const h = await openPostgres(url);
        extra.push(h);
        return h;
      },
    });
  });
}
