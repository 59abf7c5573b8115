import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { type Lease, type LeaseMode, LocalLocks, type Locks } from '../coordination.js';
import type { DatabaseLog } from './database.js';

/** How often a lease checks that its connection (and so its lock) is still there. */
const LEASE_CHECK_MS = 5_000;

/**
 * A named lock as a PostgreSQL advisory lock id: 64 bits of SHA-256 of the name (namespaced, so no other
 * application's advisory locks in the same database collide with ours in practice).
 */
export function advisoryLockId(key: string): string {
  return createHash('sha256').update(`docsearch:${key}`).digest().readBigInt64BE(0).toString();
}

/**
 * Locks across processes on one PostgreSQL database, as session-level advisory locks. PostgreSQL frees a
 * session's advisory locks when its connection ends, so a killed process never leaves one behind.
 *
 * - `withLock` holds the lock on a connection of its own pool (not the query pool: `fn` runs queries, and
 *   waiting for a query connection while holding every lock connection could deadlock). Callers in this process
 *   queue in memory first, so one key ties up at most one connection here.
 * - `tryAcquire` holds the lock on a dedicated connection that checks itself every few seconds: `held()` turns
 *   false as soon as that connection is known lost, since the lock went with it.
 */
export class PgLocks implements Locks {
  private readonly local = new LocalLocks();
  private readonly leases = new Set<Lease>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly newClient: () => pg.Client,
    private readonly log?: DatabaseLog,
  ) {}

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.local.withLock(key, async () => {
      const id = advisoryLockId(key);
      const client = await this.pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [id]);
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      try {
        return await fn();
      } finally {
        try {
          await client.query('select pg_advisory_unlock($1)', [id]);
          client.release();
        } catch (err) {
          // The connection is broken, and the lock ended with it: drop the connection rather than reuse it.
          client.release(err as Error);
        }
      }
    });
  }

  async tryAcquire(key: string, mode: LeaseMode = 'exclusive'): Promise<Lease | null> {
    const id = advisoryLockId(key);
    const [take, give] = mode === 'shared' ? ['pg_try_advisory_lock_shared', 'pg_advisory_unlock_shared'] : ['pg_try_advisory_lock', 'pg_advisory_unlock'];
    const client = this.newClient();
    let held = false;
    let timer: NodeJS.Timeout | undefined;
    const drop = (why: string) => {
      if (!held) return;
      held = false;
      clearInterval(timer);
      this.leases.delete(lease);
      this.log?.warn({ event: 'lock.lost', lock: key, error: why }, 'lost a lock: its PostgreSQL connection ended');
      client.end().catch(() => undefined);
    };
    client.on('error', (err) => drop(err.message));
    client.on('end', () => drop('the connection ended'));
    const lease: Lease = {
      held: () => held,
      release: async () => {
        if (!held) return;
        held = false;
        clearInterval(timer);
        this.leases.delete(lease);
        await client.query(`select ${give}($1)`, [id]).catch(() => undefined);
        await client.end().catch(() => undefined);
      },
    };
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>(`select ${take}($1) as ok`, [id]);
      if (!rows[0]?.ok) {
        await client.end().catch(() => undefined);
        return null;
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    held = true;
    this.leases.add(lease);
    timer = setInterval(() => {
      client.query({ text: 'select 1', query_timeout: LEASE_CHECK_MS } as pg.QueryConfig).catch((err: Error) => drop(err.message));
    }, LEASE_CHECK_MS);
    timer.unref();
    return lease;
  }

  /** Releases every lease still held (shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.leases].map((lease) => lease.release()));
  }
}

/** A session holding an advisory lock: who is in the way. */
export interface LockHolder {
  pid: number;
  /** The client's address (null over a Unix socket). */
  client: string | null;
  application: string;
}

/**
 * The sessions holding the named lock (shared or exclusive), from pg_locks: a bigint advisory key is kept as its
 * high 32 bits (classid) and low 32 bits (objid), objsubid 1.
 */
export async function advisoryLockHolders(db: Kysely<any>, key: string): Promise<LockHolder[]> {
  const id = BigInt.asUintN(64, BigInt(advisoryLockId(key)));
  const { rows } = await sql<{ pid: number; client: string | null; application: string }>`
    select a.pid, host(a.client_addr) as client, a.application_name as application
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.database = (select oid from pg_database where datname = current_database())
      and l.classid = ${String(id >> 32n)}::oid and l.objid = ${String(id & 0xffffffffn)}::oid
    order by a.pid`.execute(db);
  return rows;
}
