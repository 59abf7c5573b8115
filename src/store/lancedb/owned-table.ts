import type * as lancedb from '@lancedb/lancedb';

/** A string as a LanceDB SQL literal: filters are built from ids, so quotes are doubled, never interpolated raw. */
export const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

export interface TableLog {
  warn(obj: object, msg: string): void;
}

/**
 * A LanceDB table of rows owned by a user, project and document, written only by this process. Writes
 * (add/delete/optimize/rebuild) run one at a time: LanceDB commits are optimistic and we are its only writer.
 */
export abstract class OwnedRowsTable {
  protected table: lancedb.Table | undefined;
  private writing: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastOptimized = 0;
  private closed = false;

  constructor(protected readonly log?: TableLog) {}

  protected serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => undefined);
    return run;
  }

  /** Folds new rows into the table's indexes and compacts, now. */
  optimize(): Promise<void> {
    return this.serial(async () => {
      if (!this.table) return;
      await this.table.optimize();
      await this.afterOptimize(this.table);
      this.lastOptimized = Date.now();
    });
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
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.optimize().catch((err: unknown) => this.log?.warn({ err }, 'background index optimization failed; it is retried after the next write'));
    }, wait);
    this.timer.unref();
  }

  /** Cancels a pending background optimization and waits for the write in progress. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
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
