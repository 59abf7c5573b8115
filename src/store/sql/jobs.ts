import { type QueryCreator, sql, type Transaction, type UpdateObject } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';

/**
 * The durable ingest queue (jobs table). A job is claimed under a lease that its worker renews with
 * heartbeats; a lease that is not renewed expires and the job is claimed again, by any process sharing the
 * queue. Only this module writes the jobs table (and job_turns, the order users are served in).
 *
 * Why not pg-boss or graphile-worker: both need Node ≥ 22 (we support 20), neither runs on SQLite (the embedded
 * default keeps one queue code path for both engines), and a job here commits together with its document's
 * rows (DocumentStore's transactions), which an external queue's own tables and connections would split.
 */
export interface Job {
  id: number;
  documentId: string;
  userId: string;
  kind: string;
  state: 'pending' | 'running' | 'done' | 'failed';
  /** The lease holder: the claiming worker's owner id. */
  owner: string;
  /** Claims so far, the current one included (a claim handed back unfinished is not counted). */
  attempts: number;
  /** An earlier run was handed back unfinished, so rows of it may exist. */
  released: boolean;
  runAfter: number;
  lastError: string | null;
}

export const INGEST_JOB = 'ingest';

/** Users a claim considers, in turn order, before it gives up for this round. */
const CANDIDATE_USERS = 3;

type Row = Database['jobs'];

/**
 * How long a job may wait before a claim takes it ahead of the claiming replica's own jobs (see JobStoreOptions.origin):
 * the most that preferring one's own jobs can delay another replica's, such as those a replica that died had
 * accepted. As long as a lease, the wait its jobs already had.
 */
export const AFFINITY_WAIT_MS = 2 * 60_000;

/** A user's turn once served: one more than the latest, so users are served in rotation. */
const NEXT_TURN = sql<number>`(select coalesce(max(turn), 0) + 1 from job_turns)`;

/** A claimed job as its holder names it: id and lease owner. */
export type JobLease = Pick<Job, 'id' | 'owner'>;

/**
 * The job is no longer held under this lease (it expired and another worker claimed it): its holder must drop
 * it without recording anything, and the transaction that found out rolls back.
 */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
  constructor(readonly jobId: number) {
    super(`the lease on job ${jobId} was lost: another worker holds it now`);
  }
}

const toJob = (r: Pick<Row, 'document_id' | 'user_id' | 'kind' | 'state' | 'attempts' | 'run_after' | 'last_error'> & { id: number; released: number; lease_owner: string | null }): Job => ({
  id: r.id,
  owner: r.lease_owner ?? '',
  documentId: r.document_id,
  userId: r.user_id,
  kind: r.kind,
  state: r.state,
  attempts: r.attempts,
  released: r.released === 1,
  runAfter: r.run_after,
  lastError: r.last_error,
});

export interface JobStoreOptions {
  /**
   * Shared mode: this replica's id. Jobs of the uploads it accepts carry it, and its claims prefer them (a user's
   * oldest of them, within that user's turn), since it keeps their originals on its own disk: the others would
   * fetch each one back from the object store. A job that has waited AFFINITY_WAIT_MS goes to whoever claims.
   */
  origin?: string;
}

export class JobStore {
  private readonly origin: string | null;

  constructor(
    private readonly db: Db,
    private readonly now: Clock,
    opts: JobStoreOptions = {},
  ) {
    this.origin = opts.origin ?? null;
  }

  /**
   * Inserts a pending job inside the caller's transaction (the document row and its job commit together). A user
   * queueing for the first time gets turn 0: served before everyone who has been served.
   */
  async insert(trx: Transaction<Database>, documentId: string, userId: string, kind = INGEST_JOB): Promise<void> {
    const now = this.now();
    await trx
      .insertInto('jobs')
      .values({ document_id: documentId, user_id: userId, kind, state: 'pending', attempts: 0, run_after: now, origin: this.origin, created_at: now, updated_at: now })
      .execute();
    await trx.insertInto('job_turns').values({ user_id: userId, turn: 0 }).onConflict((oc) => oc.column('user_id').doNothing()).execute();
  }

  /**
   * `insert` as CTEs of one PostgreSQL statement (see SqlDialect.writesInWith): a pending job for each document the
   * statement's `queued` CTE returns, and the owner's first turn. Nothing is queued when `queued` is empty (the
   * document was a duplicate), in the same statement.
   */
  queueWith(q: QueryCreator<Database & { queued: { id: string; user_id: string } }>, kind = INGEST_JOB) {
    const now = this.now();
    const ms = sql<number>`cast(${now} as bigint)`;
    return q
      .with('queued_job', (db) =>
        db
          .insertInto('jobs')
          .columns(['document_id', 'user_id', 'kind', 'state', 'attempts', 'run_after', 'origin', 'created_at', 'updated_at'])
          .expression((eb) =>
            eb
              .selectFrom('queued')
              .select([
                'queued.id',
                'queued.user_id',
                sql<string>`cast(${kind} as text)`.as('kind'),
                sql<'pending'>`'pending'`.as('state'),
                sql<number>`0`.as('attempts'),
                ms.as('run_after'),
                sql<string | null>`cast(${this.origin} as text)`.as('origin'),
                ms.as('created_at'),
                ms.as('updated_at'),
              ]),
          ),
      )
      .with('queued_turn', (db) =>
        db
          .insertInto('job_turns')
          .columns(['user_id', 'turn'])
          .expression((eb) => eb.selectFrom('queued').select(['queued.user_id', sql<number>`0`.as('turn')]))
          .onConflict((oc) => oc.column('user_id').doNothing()),
      );
  }

  /**
   * `complete` as a CTE of one PostgreSQL statement: `finished` returns the job's id when it was held under this
   * lease and is now done, and nothing otherwise (see `leaseLostUnlessGone` for what nothing means).
   */
  completeWith(q: QueryCreator<Database>, job: JobLease) {
    return q.with('finished', (db) =>
      db
        .updateTable('jobs')
        .set({ state: 'done', lease_owner: null, lease_expires_at: null, last_error: null, updated_at: this.now() })
        .where('id', '=', job.id)
        .where('lease_owner', '=', job.owner)
        .where('state', '=', 'running')
        .returning('id'),
    );
  }

  /** After a finish under `job`'s lease changed nothing: LeaseLost when the job still exists (another worker holds it). */
  async leaseLostUnlessGone(job: JobLease, db: Transaction<Database> | Db = this.db): Promise<void> {
    if (await db.selectFrom('jobs').select('id').where('id', '=', job.id).executeTakeFirst()) throw new LeaseLost(job.id);
  }

  /**
   * Leases that this process does not own go back to pending. Only for a process that knows it is alone on
   * the queue (embedded mode: one daemon holds the data directory, data-dir-lock.ts), called at start: every
   * other owner is dead, and waiting for its lease to expire would only delay recovery. Never in shared mode,
   * where other owners are live replicas: there a dead one's jobs come back through `reclaimExpired`.
   * Returns how many jobs were recovered.
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

  /** Running jobs whose lease ran out (a stuck worker, a dead process) go back to pending. */
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
   * Claims the next runnable job: among users with runnable jobs, the one served least recently (job_turns, so
   * the order holds across processes), then that user's oldest job. On PostgreSQL the job's row is taken with
   * FOR UPDATE SKIP LOCKED, so a concurrent claimer in another process passes over it to the next one (or the
   * next user) instead of queueing behind it; on SQLite transactions never interleave. The claiming update is
   * conditional besides: a job is never given out twice.
   */
  async claim(owner: string, leaseMs: number): Promise<Job | null> {
    return dialectOf(this.db).writesInWith ? this.claimInOneStatement(owner, leaseMs) : this.claimInTransaction(owner, leaseMs);
  }

  /**
   * The claim as one PostgreSQL statement (one round trip instead of six: BEGIN, the candidate users, the row
   * lock, the update, the turn, COMMIT). Users in turn order, each user's oldest runnable job taken by a LATERAL
   * lookup under FOR UPDATE SKIP LOCKED: a user whose runnable jobs are all being taken by others yields nothing
   * and the next user is tried, as the transaction's loop does. With an `origin`, a user's job is the oldest overdue
   * one (AFFINITY_WAIT_MS), else the oldest of this replica's own, else the oldest. The users are sorted first (a materialized CTE)
   * and the nested loop keeps their order and stops at the first job found, so one row is locked; sorting after
   * the join instead, as the planner does with an outer ORDER BY, locked every user's first job.
   */
  private async claimInOneStatement(owner: string, leaseMs: number): Promise<Job | null> {
    const now = this.now();
    const row = await this.db
      .with(
        (cte) => cte('turns').materialized(),
        (db) => db.selectFrom('job_turns').select('user_id').orderBy('turn').orderBy('user_id'),
      )
      .with('next', (db) =>
        db
          .selectFrom('turns as t')
          .innerJoinLateral(
            (eb) => {
              const oldest = (runnableBy: number, own = false) =>
                eb
                  .selectFrom('jobs as j')
                  .select('j.id')
                  .whereRef('j.user_id', '=', 't.user_id')
                  .where('j.state', '=', 'pending')
                  .where('j.run_after', '<=', runnableBy)
                  .$if(own, (q) => q.where('j.origin', '=', this.origin))
                  .orderBy('j.run_after')
                  .orderBy('j.id')
                  .limit(1)
                  .forUpdate()
                  .skipLocked();
              // A job overdue for anyone, else this replica's own oldest, else anyone's oldest. COALESCE stops at
              // the first lookup that finds one, so no other locks a row (a UNION may not lock rows at all).
              const lookups = this.origin === null ? [oldest(now)] : [oldest(now - AFFINITY_WAIT_MS), oldest(now, true), oldest(now)];
              return sql<{ id: number | null }>`(select coalesce(${sql.join(lookups)}) as id)`.as('n');
            },
            (join) => join.onTrue(),
          )
          .where('n.id', 'is not', null)
          .select(['n.id', 't.user_id'])
          .limit(1),
      )
      .with('claimed', (db) =>
        db
          .updateTable('jobs')
          .from('next')
          .set((eb) => ({ state: 'running', lease_owner: owner, lease_expires_at: now + leaseMs, attempts: eb('jobs.attempts', '+', 1), updated_at: now }))
          .whereRef('jobs.id', '=', 'next.id')
          .where('jobs.state', '=', 'pending')
          .returningAll('jobs'),
      )
      .with('turned', (db) =>
        db
          .insertInto('job_turns')
          .columns(['user_id', 'turn'])
          .expression((eb) => eb.selectFrom('claimed').select(['claimed.user_id', NEXT_TURN.as('turn')]))
          .onConflict((oc) => oc.column('user_id').doUpdateSet({ turn: (eb) => eb.ref('excluded.turn') })),
      )
      .selectFrom('claimed')
      .selectAll()
      .executeTakeFirst();
    return row ? toJob(row) : null;
  }

  /** The claim as a transaction of several statements (SQLite, where they cost no round trips; one process, so no `origin`). */
  private async claimInTransaction(owner: string, leaseMs: number): Promise<Job | null> {
    const d = dialectOf(this.db);
    return this.db.transaction().execute(async (trx) => {
      const now = this.now();
      // A few users with runnable jobs, in turn order (ties: older accounts first): when every runnable job of the
      // first is being taken by others, the next. Per user an index probe, so the queue's length costs nothing.
      const users = await trx
        .selectFrom('job_turns as t')
        .select('t.user_id')
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('jobs as j')
              .select('j.id')
              .whereRef('j.user_id', '=', 't.user_id')
              .where('j.state', '=', 'pending')
              .where('j.run_after', '<=', now),
          ),
        )
        .orderBy('t.turn')
        .orderBy('t.user_id')
        .limit(CANDIDATE_USERS)
        .execute();
      for (const { user_id: userId } of users) {
        const next = await trx
          .selectFrom('jobs')
          .select('id')
          .where('user_id', '=', userId)
          .where('state', '=', 'pending')
          .where('run_after', '<=', now)
          .orderBy('run_after')
          .orderBy('id')
          .limit(1)
          .$if(d.lockRows, (q) => q.forUpdate().skipLocked())
          .executeTakeFirst();
        if (!next) continue;
        const row = await trx
          .updateTable('jobs')
          .set((eb) => ({ state: 'running', lease_owner: owner, lease_expires_at: now + leaseMs, attempts: eb('attempts', '+', 1), updated_at: now }))
          .where('id', '=', next.id)
          .where('state', '=', 'pending')
          .returningAll()
          .executeTakeFirst();
        if (!row) continue;
        await trx
          .insertInto('job_turns')
          .values({ user_id: userId, turn: NEXT_TURN })
          .onConflict((oc) => oc.column('user_id').doUpdateSet({ turn: NEXT_TURN }))
          .execute();
        return toJob(row);
      }
      return null;
    });
  }

  /** Extends a lease; false when the job is no longer ours (reclaimed or deleted with its document). */
  async heartbeat(job: JobLease, leaseMs: number): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .updateTable('jobs')
      .set({ lease_expires_at: now + leaseMs, updated_at: now })
      .where('id', '=', job.id)
      .where('lease_owner', '=', job.owner)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * Ends a job held under `job`'s lease with `set`. Nothing happens when the job is gone (deleted with its
   * document); LeaseLost when another worker holds it now.
   */
  private async finish(db: Transaction<Database> | Db, job: JobLease, set: UpdateObject<Database, 'jobs'>): Promise<void> {
    const res = await db
      .updateTable('jobs')
      .set(set)
      .where('id', '=', job.id)
      .where('lease_owner', '=', job.owner)
      .where('state', '=', 'running')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) await this.leaseLostUnlessGone(job, db);
  }

  async complete(job: JobLease, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await this.finish(trx, job, { state: 'done', lease_owner: null, lease_expires_at: null, last_error: null, updated_at: this.now() });
  }

  async fail(job: JobLease, error: string, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await this.finish(trx, job, { state: 'failed', lease_owner: null, lease_expires_at: null, last_error: error, updated_at: this.now() });
  }

  /** Puts a job back for a later attempt (transient failure). */
  async retryLater(job: JobLease, error: string, runAfter: number, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await this.finish(trx, job, { state: 'pending', lease_owner: null, lease_expires_at: null, last_error: error, run_after: runAfter, updated_at: this.now() });
  }

  /**
   * A failed document's job runs again, as if new (attempts from zero); `released` makes its run clear any rows
   * an earlier run left. Inside the caller's transaction, which queues the document with it.
   */
  async reopen(trx: Transaction<Database>, documentId: string): Promise<number> {
    const now = this.now();
    const res = await trx
      .updateTable('jobs')
      .set({ state: 'pending', attempts: 0, released: 1, lease_owner: null, lease_expires_at: null, last_error: null, run_after: now, updated_at: now })
      .where('document_id', '=', documentId)
      .where('state', '=', 'failed')
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /**
   * A settled document's job runs again for new bytes (DocumentStore.replaceContent): pending, attempts from zero,
   * `released` so that its run first removes the rows of the old bytes. A document whose finished job is gone (a
   * `docsearch migrate` leaves finished jobs behind) gets a new one, released likewise. Inside the caller's transaction.
   */
  async rerun(trx: Transaction<Database>, documentId: string, userId: string): Promise<void> {
    const now = this.now();
    const res = await trx
      .updateTable('jobs')
      .set({ state: 'pending', attempts: 0, released: 1, lease_owner: null, lease_expires_at: null, last_error: null, run_after: now, updated_at: now })
      .where('document_id', '=', documentId)
      .where('state', 'in', ['done', 'failed'])
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return;
    await this.insert(trx, documentId, userId);
    await trx.updateTable('jobs').set({ released: 1 }).where('document_id', '=', documentId).where('state', '=', 'pending').execute();
  }

  /** A claimed job handed back unfinished (a graceful shutdown): pending again, and the claim does not count as an attempt. */
  async release(job: JobLease, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await this.finish(trx, job, { state: 'pending', lease_owner: null, lease_expires_at: null, attempts: sql<number>`attempts - 1`, released: 1, updated_at: this.now() });
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

  /**
   * Open jobs by state, and when the oldest of each was queued (metrics, read at each scrape): one grouped read
   * over the `jobs_claim` index's open states, not over the finished jobs the table keeps.
   */
  async queueStats(): Promise<{ state: 'pending' | 'running'; count: number; oldestCreatedAt: number | null }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n'), eb.fn.min<number>('created_at').as('oldest')])
      .where('state', 'in', ['pending', 'running'])
      .groupBy('state')
      .execute();
    return rows.map((r) => ({ state: r.state as 'pending' | 'running', count: Number(r.n), oldestCreatedAt: r.oldest === null ? null : Number(r.oldest) }));
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
