import type { Transaction } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/**
 * The durable ingest queue (jobs table). A job is claimed under a lease that its worker renews with
 * heartbeats; a lease that is not renewed expires and the job is claimed again. Only this module
 * writes the jobs table.
 */
export interface Job {
  id: number;
  documentId: string;
  userId: string;
  kind: string;
  state: 'pending' | 'running' | 'done' | 'failed';
  /** Claims so far, the current one included (a claim handed back unfinished is not counted). */
  attempts: number;
  /** An earlier run was handed back unfinished, so rows of it may exist. */
  released: boolean;
  runAfter: number;
  lastError: string | null;
}

export const INGEST_JOB = 'ingest';

type Row = Database['jobs'];

const toJob = (r: Pick<Row, 'document_id' | 'user_id' | 'kind' | 'state' | 'attempts' | 'run_after' | 'last_error'> & { id: number; released: number }): Job => ({
  id: r.id,
  documentId: r.document_id,
  userId: r.user_id,
  kind: r.kind,
  state: r.state,
  attempts: r.attempts,
  released: r.released === 1,
  runAfter: r.run_after,
  lastError: r.last_error,
});

export class JobStore {
  /** Round-robin state: when each user was last served, so one user's 500 files don't starve another's one. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Inserts a pending job inside the caller's transaction (the document row and its job commit together). */
  async insert(trx: Transaction<Database>, documentId: string, userId: string, kind = INGEST_JOB): Promise<void> {
    const now = this.now();
    await trx
      .insertInto('jobs')
      .values({ document_id: documentId, user_id: userId, kind, state: 'pending', attempts: 0, run_after: now, created_at: now, updated_at: now })
      .execute();
  }

  /**
   * Leases that this process does not own go back to pending. Called at start: one daemon holds the data
   * directory (data-dir-lock.ts), so every other owner is dead and waiting for its lease to expire would
   * only delay recovery. Returns how many jobs were recovered.
   */
  async recoverForeignLeases(owner: string): Promise<number> {
    const res = await this.db
      .updateTable('jobs')
      .set({ state: 'pending', lease_owner: null, lease_expires_at: null, updated_at: this.now() })
      .where('state', '=', 'running')
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '!=', owner)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** Running jobs whose lease ran out (a stuck worker) go back to pending. */
  async reclaimExpired(): Promise<number> {
    const now = this.now();
    const res = await this.db
      .updateTable('jobs')
      .set({ state: 'pending', lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('state', '=', 'running')
      .where('lease_expires_at', '<', now)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /**
   * Claims the next runnable job: among users with runnable jobs, the one served least recently, then that
   * user's oldest job. The claim is a conditional update, so two claimers never get the same job.
   */
  async claim(owner: string, leaseMs: number): Promise<Job | null> {
    for (let tries = 0; tries < 5; tries++) {
      const now = this.now();
      const users = await this.db
        .selectFrom('jobs')
        .select('user_id')
        .distinct()
        .where('state', '=', 'pending')
        .where('run_after', '<=', now)
        .execute();
      if (users.length === 0) return null;
      const user = users
        .map((u) => u.user_id)
        .sort((a, b) => (this.lastServed.get(a) ?? -1) - (this.lastServed.get(b) ?? -1))[0]!;
      const next = await this.db
        .selectFrom('jobs')
        .select('id')
        .where('state', '=', 'pending')
        .where('user_id', '=', user)
        .where('run_after', '<=', now)
        .orderBy('run_after')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (!next) continue;
      const res = await this.db
        .updateTable('jobs')
        .set((eb) => ({
          state: 'running',
          lease_owner: owner,
          lease_expires_at: now + leaseMs,
          attempts: eb('attempts', '+', 1),
          updated_at: now,
        }))
        .where('id', '=', next.id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) continue;
      this.lastServed.set(user, ++this.served);
      const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', next.id).executeTakeFirstOrThrow();
      return toJob(row);
    }
    return null;
  }

  /** Extends a lease; false when the job is no longer ours (reclaimed or deleted with its document). */
  async heartbeat(id: number, owner: string, leaseMs: number): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .updateTable('jobs')
      .set({ lease_expires_at: now + leaseMs, updated_at: now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async complete(id: number, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await trx
      .updateTable('jobs')
      .set({ state: 'done', lease_owner: null, lease_expires_at: null, last_error: null, updated_at: this.now() })
      .where('id', '=', id)
      .execute();
  }

  async fail(id: number, error: string, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await trx
      .updateTable('jobs')
      .set({ state: 'failed', lease_owner: null, lease_expires_at: null, last_error: error, updated_at: this.now() })
      .where('id', '=', id)
      .execute();
  }

  /** Puts a job back for a later attempt (transient failure). */
  async retryLater(id: number, error: string, runAfter: number, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await trx
      .updateTable('jobs')
      .set({ state: 'pending', lease_owner: null, lease_expires_at: null, last_error: error, run_after: runAfter, updated_at: this.now() })
      .where('id', '=', id)
      .execute();
  }

  /** A claimed job handed back unfinished (a graceful shutdown): pending again, and the claim does not count as an attempt. */
  async release(id: number, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await trx
      .updateTable('jobs')
      .set((eb) => ({ state: 'pending', lease_owner: null, lease_expires_at: null, attempts: eb('attempts', '-', 1), released: 1, updated_at: this.now() }))
      .where('id', '=', id)
      .where('state', '=', 'running')
      .where('attempts', '>', 0)
      .execute();
  }

  /**
   * This owner's leased jobs that no loop is running any more (their run stopped on a full disk, and so
   * could its requeue) go back to pending, the claim not counted: running out of space is not the
   * document's fault. Returns their document ids.
   */
  async releaseIdleLeases(owner: string, running: number[], trx: Transaction<Database> | Db = this.db): Promise<string[]> {
    let q = trx.updateTable('jobs').where('state', '=', 'running').where('lease_owner', '=', owner);
    if (running.length > 0) q = q.where('id', 'not in', running);
    const rows = await q
      .set((eb) => ({ state: 'pending', lease_owner: null, lease_expires_at: null, attempts: eb('attempts', '-', 1), released: 1, run_after: this.now(), updated_at: this.now() }))
      .returning('document_id')
      .execute();
    return rows.map((r) => r.document_id);
  }

  /** Earliest time a pending job becomes runnable, for the worker's sleep; null when none is pending. */
  async nextRunAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min<number>('run_after').as('at'))
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return row?.at ?? null;
  }

  /** Jobs not finished yet (pending or running), for health and tests. */
  async countOpen(): Promise<number> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', 'in', ['pending', 'running'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
