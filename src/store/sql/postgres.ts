import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle, DatabaseLog } from './database.js';
import { redactDatabaseUrl } from './database-url.js';
import { NewerLibraryError } from '../../core/newer-library.js';
import { migrate, refuseNewerSchema } from './migrations/index.js';
import { PgEvents } from './pg-events.js';
import { PgLocks } from './pg-locks.js';
import type { Database } from './schema.js';

const INT8_OID = 20;
const PROBE_TIMEOUT_MS = 1_500;

/**
 * `pg` returns int8 (bigint: epoch-ms times, sizes, jobs' ids, counts) as strings, to be safe beyond 2^53. Every
 * int8 here is far below that (milliseconds until the year 287,396), so it is read as a number, and a value that
 * is not safe fails loudly instead of losing digits.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${text} does not fit a JavaScript number`);
  return n;
}

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Connection settings shared by the pools and the dedicated connections (events, leases). */
function clientConfig(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    types,
    application_name: 'docsearch',
    // A request waits this long for a connection, then fails (503) instead of hanging while PostgreSQL is away.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * A pool whose every connection has an error listener: `pg` emits 'error' on a client whose server went away
 * (a restart, a dropped network) even while no query runs, and an unheard 'error' would end the process. The
 * failure itself reaches whoever uses the connection next; the pool drops it and opens a fresh one.
 */
function resilientPool(url: string, max: number, log: DatabaseLog | undefined, role: string): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(url), max, idleTimeoutMillis: 30_000 });
  let reported = 0;
  const report = (err: Error) => {
    // One line per outage burst rather than one per pooled connection.
    if (Date.now() - reported < 10_000) return;
    reported = Date.now();
    log?.warn({ event: 'database.connection_lost', role, error: err.message }, 'a PostgreSQL connection was lost; the next query opens a new one');
  };
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
  return pool;
}

/**
 * Opens the shared-mode database: a connection pool behind Kysely's PostgreSQL dialect, migrated to the latest
 * schema (replicas starting together migrate once, under the Migrator's advisory lock), plus advisory locks and
 * LISTEN/NOTIFY events on their own connections. Connection failures never end the process; queries fail (and
 * health says so) until PostgreSQL is back.
 */
export async function openPostgres(url: string, log?: DatabaseLog, opts: { migrate?: boolean } = {}): Promise<DatabaseHandle> {
  const location = redactDatabaseUrl(url);
  const pool = resilientPool(url, 10, log, 'queries');
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const lockPool = resilientPool(url, 10, log, 'locks');
  const locks = new PgLocks(lockPool, () => new pg.Client(clientConfig(url)), log);
  const events = new PgEvents(pool, () => new pg.Client(clientConfig(url)), log);
  const closeAll = async () => {
    events.close();
    await locks.close();
    await lockPool.end();
    await db.destroy(); // ends `pool`
  };
  try {
    await refuseNewerSchema(db);
    if (opts.migrate ?? true) await migrate(db);
  } catch (err) {
    await closeAll().catch(() => undefined);
    if (err instanceof NewerLibraryError) throw err;
    throw new Error(`cannot open the PostgreSQL database ${location}: ${(err as Error).message}`, { cause: err });
  }
  let closed: Promise<void> | undefined;
  return {
    db,
    engine: 'postgresql',
    location,
    shared: true,
    locks,
    events,
    probe: () => {
      // Bounded: while PostgreSQL is away a connection attempt may wait for its own (longer) timeout.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('PostgreSQL did not answer within 1.5 s')), PROBE_TIMEOUT_MS);
      });
      return Promise.race([sql`select 1`.execute(db).then(() => undefined), deadline]).finally(() => clearTimeout(timer));
    },
    close: () => (closed ??= closeAll()),
  };
}
