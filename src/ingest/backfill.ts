/**
 * The chunk backfill: one background pass that brings the chunks already stored (by an earlier release, or before a
 * re-index) up to what ingestion writes today, so an upgraded library searches at once and gains what is new as the
 * pass goes.
 *
 * Each concern is a `ChunkDeriver`: the columns it fills, a predicate naming the rows that still lack them, and how
 * to compute them from columns the rows have. The pass takes the pending rows of each deriver in turn (round-robin,
 * so a slow deriver — one that runs the model — does not hold a cheap one back for hours), computes, and writes the
 * values into those rows by id. Nothing is remembered but the rows themselves: a restart, a crash or another
 * replica taking over resumes where the rows say. Ingestion writes every deriver's columns for the rows it adds, so
 * a finished pass stays finished; a re-index (a fresh table) or `nudge()` starts it again.
 *
 * It gives way: before each batch it waits while this process ingests (uploads first) and for a moment with no
 * search in flight (core/foreground.ts); a deriver's model work goes in the model's background lane. Shared mode:
 * one replica at a time holds the BACKFILL_LEASE and runs it; the others show its progress from the table.
 */
import type { Yielder } from '../core/foreground.js';
import type { Lease, Locks } from '../store/coordination.js';
import { inList } from '../store/lancedb/owned-table.js';

export const BACKFILL_LEASE = 'chunk-backfill';

export interface ChunkDeriver {
  /** Names the concern in health, /metrics and logs ('units', 'language', …). */
  readonly name: string;
  /** The chunk columns `derive` reads (`id` is always read). */
  readonly reads: readonly string[];
  /** The chunk columns it fills (nullable, added by chunk-schema's ensureColumns for older tables). */
  readonly writes: readonly string[];
  /** A predicate (LanceDB SQL) true of the rows that still need this deriver, e.g. `units IS NULL`; false once its values are written. */
  readonly pending: string;
  /**
   * The values of `writes` for each row, in order (a column's value may be absent: null). A function of the columns
   * read: a row written again by ingestion between the read and the write gets these values too.
   */
  derive(rows: readonly Record<string, unknown>[]): Promise<Record<string, unknown>[]>;
  /** Rows per batch (default 128). */
  readonly batchRows?: number;
  /** Called once no row is pending (and at every start that finds none): switch to what the columns serve. */
  complete?(): Promise<void>;
}

/** What the backfill needs of the chunks table (ChunkIndex). */
export interface DerivedColumns {
  rowsWhere(predicate: string, columns: readonly string[], limit: number): Promise<Record<string, unknown>[]>;
  countWhere(predicate: string): Promise<number>;
  writeColumns(rows: Record<string, unknown>[], columns: readonly string[]): Promise<number>;
}

export interface DeriverStatus {
  /** Rows still lacking the deriver's columns, as last counted (and counted down as they are written); null before the first count. */
  pending: number | null;
  /** Rows this process has written since it started. */
  done: number;
  state: 'pending' | 'running' | 'done' | 'failed';
  /** Why the last batch failed (it is tried again after a wait). */
  error?: string;
}

export interface BackfillStatus {
  /**
   * `running` here; `waiting` for uploads or for a re-index to finish; `elsewhere`: another replica holds the lease
   * and runs it; `done`: nothing pending; `off`: turned off (`--backfill off`: counted, not run); `starting` before
   * the first count; `stopped` at shutdown.
   */
  state: 'starting' | 'running' | 'waiting' | 'elsewhere' | 'done' | 'off' | 'stopped';
  derivers: Record<string, DeriverStatus>;
}

export interface BackfillDeps {
  chunks: DerivedColumns;
  derivers: readonly ChunkDeriver[];
  /** Shared mode: the replicas' locks (one replica at a time runs the pass). Absent: this process is the only one. */
  locks?: Locks;
  /** Searches first (the daemon's foreground gate). */
  background?: Yielder;
  /** True while this process ingests: the pass waits (uploads first). */
  busy?: () => boolean;
  /** False while the pass must not run (a re-index is due or running: the rows are another embedder's). */
  ready?: () => boolean;
  /** Told how many rows a deriver wrote (the daemon's metrics). */
  onWritten?: (deriver: string, rows: number) => void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface BackfillOptions {
  /** How often a waiting pass looks again (uploads done, re-index over). Default 1 s. */
  pollMs?: number;
  /** Shared mode: how often a replica without the lease tries for it (and recounts what is pending). Default 60 s. */
  leaseRetryMs?: number;
  /** First wait after a failed batch (doubled each time, at most 10 min). Default 5 s. */
  retryMs?: number;
}

const DEFAULT_BATCH = 128;
const MAX_RETRY_MS = 10 * 60_000;

export class ChunkBackfill {
  private readonly statuses: Record<string, DeriverStatus>;
  private state: BackfillStatus['state'] = 'starting';
  private loop: Promise<void> | undefined;
  private stopping = false;
  /** Wakes the loop from a wait (stop, nudge). */
  private wake: (() => void) | undefined;
  private nudged = false;
  private readonly opts: Required<BackfillOptions>;

  constructor(
    private readonly deps: BackfillDeps,
    opts: BackfillOptions = {},
  ) {
    this.opts = { pollMs: opts.pollMs ?? 1000, leaseRetryMs: opts.leaseRetryMs ?? 60_000, retryMs: opts.retryMs ?? 5000 };
    this.statuses = Object.fromEntries(deps.derivers.map((d) => [d.name, { pending: null, done: 0, state: 'pending' }]));
  }

  status(): BackfillStatus {
    return { state: this.state, derivers: Object.fromEntries(Object.entries(this.statuses).map(([k, v]) => [k, { ...v }])) };
  }

  /** Starts the pass in the background (once). */
  start(): void {
    if (this.deps.derivers.length === 0) {
      this.state = 'done';
      return;
    }
    this.loop ??= this.run().catch((err: unknown) => this.deps.log.warn({ err, event: 'backfill.stopped' }, 'the chunk backfill stopped unexpectedly; it resumes at the next start'));
  }

  /** Does not run the pass (turned off): counts what is pending, once, for health and /metrics. */
  async countOnly(): Promise<void> {
    this.state = 'off';
    await this.count().catch((err: unknown) => this.deps.log.warn({ err }, 'could not count the chunks the backfill would bring up to date'));
  }

  /** Rows may be pending again (a re-index switched to a fresh table): a finished pass looks again. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.state = 'stopped';
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      if (this.deps.ready && !this.deps.ready()) {
        this.state = 'waiting';
        await this.sleep(this.opts.pollMs);
        continue;
      }
      let lease: Lease | null = null;
      if (this.deps.locks) {
        lease = await this.deps.locks.tryAcquire(BACKFILL_LEASE).catch(() => null);
        if (!lease) {
          this.state = 'elsewhere';
          await this.count().catch(() => undefined);
          if (this.allDone()) this.state = 'done';
          await this.sleep(this.opts.leaseRetryMs);
          continue;
        }
      }
      try {
        await this.pass(lease);
        failures = 0;
      } catch (err) {
        failures++;
        this.deps.log.warn({ err, event: 'backfill.failed' }, 'a chunk backfill batch failed; it is tried again after a wait');
        await lease?.release().catch(() => undefined);
        lease = null;
        await this.sleep(Math.min(MAX_RETRY_MS, this.opts.retryMs * 2 ** (failures - 1)));
        continue;
      } finally {
        await lease?.release().catch(() => undefined);
      }
      if (this.stopping) break;
      if (this.allDone()) {
        this.state = 'done';
        // Ingestion writes every deriver's columns: nothing becomes pending until a re-index makes a fresh table.
        while (!this.nudged && !this.stopping) await this.sleep(MAX_RETRY_MS);
      }
    }
  }

  /** Every deriver done, or failed (it is not tried again until the next start or nudge). */
  private allDone(): boolean {
    return Object.values(this.statuses).every((s) => s.state === 'done' || s.state === 'failed');
  }

  /** Counts every deriver's pending rows. */
  private async count(): Promise<void> {
    for (const d of this.deps.derivers) {
      const pending = await this.deps.chunks.countWhere(d.pending);
      const s = this.statuses[d.name]!;
      s.pending = pending;
      if (pending === 0) s.state = 'done';
      else if (s.state === 'done' || (s.state === 'failed' && this.nudged)) s.state = 'pending';
    }
  }

  /** One round over every deriver with pending rows, batch by batch, until none has any (or this process stops). */
  private async pass(lease: Lease | null): Promise<void> {
    await this.count();
    this.nudged = false;
    const active = this.deps.derivers.filter((d) => this.statuses[d.name]!.state !== 'done' && this.statuses[d.name]!.state !== 'failed');
    for (const d of this.deps.derivers) if (this.statuses[d.name]!.state === 'done') await this.completed(d);
    if (active.length === 0) return;
    this.deps.log.info({ event: 'backfill.started', pending: Object.fromEntries(active.map((d) => [d.name, this.statuses[d.name]!.pending])) }, 'stored chunks are brought up to date in the background');
    /** Per deriver: the first id of its last batch, to notice rows that stay pending after being written. */
    const last = new Map<string, string>();
    while (active.length > 0 && !this.stopping && (lease?.held() ?? true)) {
      for (const d of [...active]) {
        if (!(await this.quiet()) || (lease && !lease.held())) return;
        this.state = 'running';
        const s = this.statuses[d.name]!;
        s.state = 'running';
        const rows = await this.deps.chunks.rowsWhere(d.pending, ['id', ...d.reads], d.batchRows ?? DEFAULT_BATCH);
        if (rows.length === 0) {
          active.splice(active.indexOf(d), 1);
          s.pending = 0;
          await this.completed(d);
          continue;
        }
        const first = rows[0]!.id as string;
        if (last.get(d.name) === first) {
          // Its values were written and the rows still read as pending: the deriver is broken; the others go on.
          s.state = 'failed';
          s.error = `rows stay pending after their values were written (first: ${first})`;
          this.deps.log.warn({ event: 'backfill.deriver_failed', deriver: d.name, error: s.error }, `the ${d.name} backfill stopped`);
          active.splice(active.indexOf(d), 1);
          continue;
        }
        last.set(d.name, first);
        let values: Record<string, unknown>[];
        try {
          values = await d.derive(rows);
        } catch (err) {
          s.error = err instanceof Error ? err.message : String(err);
          throw err;
        }
        const written = await this.deps.chunks.writeColumns(
          values.map((v, i) => ({ ...v, id: rows[i]!.id })),
          d.writes,
        );
        // A row written again meanwhile with other content (a document re-processed in place keeps its chunk ids)
        // now holds values derived from the old: the write cannot be conditional (ChunkIndex.writeColumns), so the
        // rows are read back, and those whose read columns changed are made pending again, to be derived anew.
        const stale = await this.changedSince(rows, d);
        if (stale.length > 0) {
          await this.deps.chunks.writeColumns(stale.map((id) => ({ id, ...Object.fromEntries(d.writes.map((c) => [c, null])) })), d.writes);
          // They come back as pending: not a sign of a broken deriver.
          last.delete(d.name);
          this.deps.log.info({ event: 'backfill.rederive', deriver: d.name, rows: stale.length }, 'rows written again during a batch are derived again');
        }
        delete s.error;
        s.done += written;
        s.pending = Math.max(0, (s.pending ?? rows.length) - rows.length);
        if (written > 0) this.deps.onWritten?.(d.name, written);
      }
    }
  }

  /** The ids among `rows` (as read for `d`) whose columns `d` reads hold something else now; deleted rows are not. */
  private async changedSince(rows: readonly Record<string, unknown>[], d: ChunkDeriver): Promise<string[]> {
    const ids = rows.map((r) => r.id as string);
    const now = await this.deps.chunks.rowsWhere(inList('id', ids), ['id', ...d.reads], ids.length);
    const byId = new Map(now.map((r) => [r.id as string, r]));
    return rows.flatMap((r) => {
      const current = byId.get(r.id as string);
      return current && d.reads.some((c) => !sameValue(current[c], r[c])) ? [r.id as string] : [];
    });
  }

  private async completed(d: ChunkDeriver): Promise<void> {
    const s = this.statuses[d.name]!;
    s.state = 'done';
    s.pending = 0;
    await d.complete?.();
    if (s.done > 0) this.deps.log.info({ event: 'backfill.finished', deriver: d.name, rows: s.done }, `every stored chunk has its ${d.name}`);
  }

  /** Waits while this process ingests, then for a moment without a search; false when stopping meanwhile. */
  private async quiet(): Promise<boolean> {
    while (!this.stopping && (this.deps.busy?.() || (this.deps.ready && !this.deps.ready()))) {
      this.state = 'waiting';
      await this.sleep(this.opts.pollMs);
    }
    await this.deps.background?.yieldToForeground();
    return !this.stopping;
  }
}

/** Two column values alike: strings and numbers as they are, anything else (Arrow lists, buffers) by its JSON. */
function sameValue(a: unknown, b: unknown): boolean {
  const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  return a === b || json(a) === json(b);
}
