import type * as lancedb from '@lancedb/lancedb';
import type { Yielder } from '../../core/foreground.js';

/** A string as a LanceDB SQL literal: filters are built from ids, so quotes are doubled, never interpolated raw. */
export const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/**
 * How long a superseded table version stays on disk. A search reads the version that was current when it
 * started; searches take well under a second and time out far below a minute, so a minute is a wide margin.
 */
export const KEEP_SUPERSEDED_MS = 60_000;

/**
 * The prune cutoff: versions older than the one that was current `KEEP_SUPERSEDED_MS` ago. A running search
 * reads a version that was current at its start, i.e. that one or newer; anything older was superseded
 * before any running search began. (A plain `now - window` would be unsafe: the version a search reads may
 * have been written long ago and superseded only just now.)
 */
export async function pruneCutoff(table: lancedb.Table, keepMs = KEEP_SUPERSEDED_MS, now = Date.now()): Promise<Date> {
  const horizon = now - keepMs;
  let cutoff = 0;
  for (const v of await table.listVersions()) {
    const t = v.timestamp.getTime();
    if (t <= horizon && t > cutoff) cutoff = t;
  }
  return new Date(cutoff);
}

/**
 * LanceDB takes the cutoff as an age (now − cutoff) and turns it back into a time when it prunes, after
 * compacting: a cutoff passed with the compaction moves later by however long compaction took, and could
 * take the version a search still reads. So compaction and indexing run first, then a second call (nothing
 * left to compact: it takes milliseconds) prunes, with a second's margin for the round trip.
 */
async function optimizeAndPrune(table: lancedb.Table, keepMs: number): Promise<void> {
  await table.optimize();
  const cutoff = (await pruneCutoff(table, keepMs)).getTime() - 1000;
  if (cutoff > 0) await table.optimize({ cleanupOlderThan: new Date(cutoff), deleteUnverified: true });
}

export interface TableLog {
  warn(obj: object, msg: string): void;
}

export interface TableOptions {
  log?: TableLog;
  /** How long superseded versions are kept (default KEEP_SUPERSEDED_MS; tests shorten it). */
  keepSupersededMs?: number;
  /** Background optimizations give way to searches in flight (core/foreground.ts). */
  background?: Yielder;
}

/**
 * A LanceDB table of rows owned by a user, project and document, written only by this process. Writes
 * (add/delete/optimize/rebuild) run one at a time: LanceDB commits are optimistic and we are its only writer.
 */
export abstract class OwnedRowsTable {
  protected table: lancedb.Table | undefined;
  private writing: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private lastOptimized = 0;
  private closed = false;

  protected readonly log: TableLog | undefined;
  private readonly keepMs: number;
  private readonly background: Yielder | undefined;

  constructor(opts: TableOptions = {}) {
    this.log = opts.log;
    this.background = opts.background;
    this.keepMs = opts.keepSupersededMs ?? KEEP_SUPERSEDED_MS;
  }

  protected serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => undefined);
    return run;
  }

  /**
   * Folds new rows into the table's indexes, compacts, and deletes what only superseded versions use (see
   * pruneCutoff). Files no version references, left by writes a crash cut short, go too: this process is
   * the table's only writer and its writes are serialised with this, so none can be in progress.
   */
  optimize(): Promise<void> {
    return this.serial(async () => {
      if (!this.table) return;
      await optimizeAndPrune(this.table, this.keepMs);
      await this.afterOptimize(this.table);
      this.lastOptimized = Date.now();
      this.prunePending();
    });
  }

  /**
   * The versions of a burst of writes are still within the window when its last optimize runs; one more
   * pass once they are out of it deletes them, so an idle table settles at about its compacted size.
   */
  private prunePending(): void {
    clearTimeout(this.pruneTimer);
    if (this.closed) return;
    this.pruneTimer = setTimeout(() => {
      this.pruneTimer = undefined;
      this.serial(async () => {
        if (this.table && !this.closed) await optimizeAndPrune(this.table, this.keepMs);
      }).catch((err: unknown) => this.log?.warn({ err }, 'pruning old table versions failed; it is retried after the next write'));
    }, this.keepMs + 2000);
    this.pruneTimer.unref();
  }

  /** Subclasses keep further indexes in step here (inside the write queue). */
  protected async afterOptimize(_table: lancedb.Table): Promise<void> {}

  /** Least time between two background optimizations; grows with the table (see subclasses). */
  protected optimizeGapMs(): number {
    return 1000;
  }

  /**
   * What writers call after each write: an optimize soon, at most one per `optimizeGapMs()`, so a burst
   * of small documents shares one index update instead of each adding an index segment. Rows written
   * meanwhile are already searchable (LanceDB scans unindexed rows); this only keeps scans short.
   */
  optimizeSoon(): void {
    if (this.timer || this.closed || !this.table) return;
    const wait = Math.max(0, this.lastOptimized + this.optimizeGapMs() - Date.now());
    this.timer = setTimeout(async () => {
      await this.background?.yieldToForeground();
      this.timer = undefined;
      // close() may have run during the wait: the table must not be touched after it returned.
      if (this.closed) return;
      this.optimize().catch((err: unknown) => this.log?.warn({ err }, 'background index optimization failed; it is retried after the next write'));
    }, wait);
    this.timer.unref();
  }

  /** Cancels a pending background optimization and waits for the write in progress. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.pruneTimer);
    this.timer = undefined;
    await this.writing;
  }

  deleteDocument(documentId: string): Promise<void> {
    return this.deleteWhere(`document_id = ${lit(documentId)}`);
  }

  deleteProject(projectId: string): Promise<void> {
    return this.deleteWhere(`project_id = ${lit(projectId)}`);
  }

  private deleteWhere(predicate: string): Promise<void> {
    return this.serial(async () => {
      if (this.table) await this.table.delete(predicate);
    });
  }
}
