import type * as lancedb from '@lancedb/lancedb';
import type { Yielder } from '../../core/foreground.js';
import { type ColumnDefaults, conformBatch, type RecordBatch, type Schema, tableOf } from './arrow-batches.js';
import type { SharedAccess } from './connection.js';
import { PruneHorizon } from './prune-horizon.js';
import { isTaggedVersionCleanup } from './version-pins.js';

/** A string as a LanceDB SQL literal: filters are built from ids, so quotes are doubled, never interpolated raw. */
export const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** A value as a LanceDB SQL expression: text quoted, a list of texts as a list (typed when empty). */
export function sqlValue(v: string | number | null | readonly string[]): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number') return `CAST(${Math.trunc(v)} AS BIGINT)`;
  if (typeof v === 'string') return lit(v);
  return v.length === 0 ? "arrow_cast(make_array(), 'List(Utf8)')" : `[${v.map(lit).join(', ')}]`;
}

/** `column IN (…values)` as a filter; no values matches nothing. */
export const inList = (column: string, values: readonly string[]): string => (values.length === 0 ? 'false' : `${column} IN (${values.map(lit).join(', ')})`);

/**
 * How long a superseded table version stays on disk. A search reads the version that was current when it
 * started; searches take well under a second and time out far below a minute, so a minute is a wide margin.
 */
export const KEEP_SUPERSEDED_MS = 60_000;

/**
 * The least time between two prunes, as a share of the retention: each prune reads every version's manifest
 * (one object-store request apiece on S3), so a pass that follows each write does not prune each time. Versions
 * then stay at most a tenth longer than the window; the pass that follows a burst prunes what it left.
 */
const PRUNE_GAP_SHARE = 0.1;

/**
 * LanceDB takes the cutoff as an age (now − cutoff) and turns it back into a time when it prunes, after
 * compacting: a cutoff passed with the compaction moves later by however long compaction took, and could
 * take the version a search still reads. So compaction and indexing run first, then a second call (nothing
 * left to compact: it takes milliseconds) prunes, with a second's margin for the round trip.
 *
 * `deleteUnverified` also deletes files no version references, whatever their age: with a single writer those
 * are leftovers of writes a crash cut short. With several writers they may be another replica's write that is
 * about to commit, so shared mode leaves them to LanceDB's own age limit (7 days).
 */
const PRUNE_MARGIN_MS = 1000;

/** What upkeep keeps per table between passes. */
interface Upkept {
  name: string;
  /** The handle passes work on. */
  table: lancedb.Table;
  close(): void;
  horizon: PruneHorizon;
  /** The version the last pass left: a pass that finds it still latest has nothing to do. */
  settled: number | undefined;
  /** The cutoff of the last prune, and when it ran. */
  prunedTo: number;
  prunedAt: number;
}

/** LanceDB's own retries of a commit another writer got in first ran out (it rebases appends itself). */
export const isCommitConflict = (err: unknown): boolean => /commit conflict|too many concurrent writers/i.test((err as Error)?.message ?? '');

/** How often a conflicting commit is tried again, and the first wait (doubled each time, with jitter). */
export const CONFLICT_RETRIES = 6;

/**
 * Shared mode: the lock an upkeep pass on a table of this kind holds, and what drops a replaced table takes too,
 * so that no pass is still writing into a table's files while they are deleted (its commit would bring the table
 * back, half gone).
 */
export const upkeepLockKey = (kind: string): string => `lancedb:${kind}-upkeep`;
const CONFLICT_BACKOFF_MS = 100;

/**
 * Shared mode: the least time between two refreshes started by other replicas' `document_settled` events. Each
 * refresh lists the table's versions and reads a manifest; while every replica ingests, events arrive several
 * times a second on each, and refreshing on every one was most of the requests to the store. A read re-checks
 * within READ_CONSISTENCY_S anyway; the event only makes it sooner.
 */
const REMOTE_REFRESH_GAP_MS = 400;

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
 * A LanceDB table of rows owned by a user, project and document. Writes (add/delete/optimize/rebuild) from this
 * process run one at a time.
 *
 * Embedded mode: this process is the table's only writer, and optimizes it itself.
 * Shared mode (`shared`): replicas write the same table. Each commit is retried with backoff when another got in
 * first and LanceDB's own retries ran out, and optionally funnelled (one committer per table across replicas).
 * Only the upkeep leader optimizes and prunes, keeping superseded versions for hours. Other replicas' commits
 * are seen within READ_CONSISTENCY_S, and at once when a `document_settled` event arrives.
 */
export abstract class OwnedRowsTable {
  protected table: lancedb.Table | undefined;
  private writing: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** The upkeep pass running, and the one asked for meanwhile (it starts when that one ends). */
  private passing: Promise<void> | undefined;
  private nextPass: Promise<void> | undefined;
  /** What upkeep knows of the table it last worked on (see Upkept). */
  private upkept: Upkept | undefined;
  private closed = false;
  private refreshing: Promise<void> | undefined;
  /**
   * This handle's commits, and its refreshes for other replicas' commits, counted: a second handle on the table
   * (searches through the file cache) catches up when they differ from what it last saw.
   */
  protected commits = 0;
  protected refreshes = 0;
  /**
   * The version the last commit made, where LanceDB answered it (add, delete and update do): asking the handle
   * instead lists the table's versions after a delete.
   */
  protected committedVersion: number | undefined;
  /** A refresh for other replicas' writes, waiting out REMOTE_REFRESH_GAP_MS. */
  private remoteRefresh: NodeJS.Timeout | undefined;
  private lastRemoteRefresh = 0;
  private refreshAgain = false;
  /** Event subscriptions, ended at close. */
  protected readonly subscriptions: (() => void)[] = [];

  protected readonly log: TableLog | undefined;
  private readonly keepMs: number;
  private readonly background: Yielder | undefined;

  /**
   * @param kind the logical table ('chunks', 'chunk_windows'): names its commit lock in shared mode
   * @param shared present when other processes write the same tables
   */
  constructor(
    opts: TableOptions,
    protected readonly kind: string,
    protected readonly shared?: SharedAccess,
  ) {
    this.log = opts.log;
    this.background = opts.background;
    this.keepMs = opts.keepSupersededMs ?? shared?.keepSupersededMs ?? KEEP_SUPERSEDED_MS;
    if (shared) {
      this.subscriptions.push(
        shared.events.subscribe('document_settled', () => this.onRemoteWrite()),
        // A new leader catches up on what the previous one left.
        shared.upkeep.onAcquired(() => this.optimizeSoon()),
      );
    }
  }

  protected serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => undefined);
    return run;
  }

  /**
   * One commit to the table. Embedded: as is. Shared: under the table's lock when funnelling, and tried again
   * with backoff on a commit conflict.
   *
   * `matching`: the commit changes rows it finds by a predicate (a delete, an update), on that handle. LanceDB finds
   * them in the handle's version, which in shared mode may be a consistency interval old, and rebases the commit over
   * newer ones without looking again: rows another replica appended meanwhile were left (a deleted document's chunks
   * outliving it). So the handle moves to the latest version first, inside the lock that holds other replicas'
   * commits off.
   */
  protected async commit<T>(fn: () => Promise<T>, matching?: lancedb.Table): Promise<T> {
    const shared = this.shared;
    const run = shared && matching ? () => matching.checkoutLatest().then(fn) : fn;
    let result: T | undefined;
    try {
      result = shared ? await this.retryConflicts(shared.funnelCommits ? () => shared.locks.withLock(`lancedb:${this.kind}`, run) : run) : await run();
      return result;
    } finally {
      const version = (result as { version?: unknown } | undefined)?.version;
      this.committedVersion = typeof version === 'number' ? version : undefined;
      this.commits++;
    }
  }

  /** A conflicting commit did not happen, so trying it again is safe. */
  private async retryConflicts<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!isCommitConflict(err) || attempt >= CONFLICT_RETRIES) throw err;
        const wait = CONFLICT_BACKOFF_MS * 2 ** attempt * (0.5 + Math.random());
        this.log?.warn({ table: this.kind, attempt: attempt + 1, waitMs: Math.round(wait) }, 'commit conflict with another writer; trying again');
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * Another replica committed (a document settled there): this one's view is brought up to date now (or, in a
   * burst of such events, at most once every REMOTE_REFRESH_GAP_MS) rather than at the next consistency check,
   * and the upkeep leader schedules an optimize for the new rows.
   */
  private onRemoteWrite(): void {
    if (this.closed) return;
    this.optimizeSoon();
    if (this.remoteRefresh) return;
    const wait = Math.max(0, this.lastRemoteRefresh + REMOTE_REFRESH_GAP_MS - Date.now());
    this.remoteRefresh = setTimeout(() => {
      this.remoteRefresh = undefined;
      if (this.closed) return;
      this.lastRemoteRefresh = Date.now();
      void this.refresh().catch((err: unknown) => this.log?.warn({ err, table: this.kind }, 'could not refresh the table from the store; the next read re-checks'));
    }, wait);
  }

  /** Brings the view up to date: one refresh at a time, and one more if asked meanwhile. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        if (this.table) await this.refreshView(this.table);
        else await this.discover();
        this.refreshes++;
      } while (this.refreshAgain && !this.closed);
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Shared mode: picks up a table another replica created since this one opened. */
  protected async discover(): Promise<void> {}

  /** Moves the handle to the latest version (for another replica's commit). */
  protected async refreshView(table: lancedb.Table): Promise<void> {
    await table.checkoutLatest();
  }

  /** Whether this process runs optimize and prune: always in embedded mode, only the lease holder in shared mode. */
  private upkeeper(): boolean {
    return !this.shared || this.shared.upkeep.isLeader();
  }

  /**
   * Folds new rows into the table's indexes, compacts, and deletes what only superseded versions use (see
   * PruneHorizon): one pass, on the upkeeper only, and none while another runs (a call meanwhile gets the next).
   *
   * A pass works only when the table changed since the last one, and prunes only when a version can have aged
   * out of the window and not more often than PRUNE_GAP_SHARE of it: on S3 each prune reads every version's
   * manifest, and an idle table needs nothing.
   *
   * Embedded: inside the write queue, and files no version references (left by writes a crash cut short) go
   * too: this process is the table's only writer, so none can be in progress. Shared: on a handle of its own,
   * outside the write queue, so this process's writes go on meanwhile as other replicas' do (LanceDB rebases
   * them onto the compaction); unreferenced files stay (another replica's write in flight).
   */
  optimize(): Promise<void> {
    if (this.nextPass) return this.nextPass;
    const pass: Promise<void> = (this.passing ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        this.nextPass = undefined;
        this.passing = pass;
        return this.shared ? this.upkeepPass() : this.serial(() => this.upkeepPass());
      })
      .finally(() => {
        if (this.passing === pass) this.passing = undefined;
      });
    this.nextPass = pass;
    return pass;
  }

  private async upkeepPass(): Promise<void> {
    const current = this.table;
    if (!current || this.closed || !this.upkeeper()) return;
    const shared = this.shared;
    if (!shared) return this.pass(current);
    await shared.locks.withLock(upkeepLockKey(this.kind), () => this.pass(current));
  }

  private async pass(current: lancedb.Table): Promise<void> {
    const upkept = await this.upkeepHandle(current);
    const table = upkept.table;
    if (this.shared) await table.checkoutLatest();
    const before = await table.version();
    if (before !== upkept.settled) {
      const started = Date.now();
      // Not funnelled: compaction takes seconds, and LanceDB rebases appends committed meanwhile onto it.
      await this.retryConflicts(() => table.optimize());
      await this.afterOptimize(table);
      // This pass's own commit, stamped by this clock while it ran: a mark for the prune horizon.
      if ((await table.version()) !== before) upkept.horizon.note({ at: started, by: Date.now() });
      upkept.settled = await table.version();
      this.prunePending();
    }
    await this.pruneIfDue(upkept);
  }

  /** Deletes what only versions out of the window use, when one can have aged out since the last prune. */
  private async pruneIfDue(upkept: Upkept): Promise<void> {
    const now = Date.now();
    if (now - upkept.prunedAt < this.keepMs * PRUNE_GAP_SHARE) return;
    const table = upkept.table;
    // Once per table and process: versions written before it looked. Later ones it learns from its passes.
    if (upkept.horizon.needsListing()) upkept.horizon.learn((await table.listVersions()).map((v) => v.timestamp));
    const cutoff = upkept.horizon.cutoff(now) - PRUNE_MARGIN_MS;
    if (cutoff <= upkept.prunedTo) return;
    try {
      await table.optimize({ cleanupOlderThan: new Date(cutoff), deleteUnverified: !this.shared });
    } catch (err) {
      // A backup holds a version this prune would reach (version-pins.ts): pruning waits until it has copied it.
      if (!isTaggedVersionCleanup(err)) throw err;
      return;
    }
    upkept.prunedTo = cutoff;
    upkept.prunedAt = Date.now();
    upkept.settled = await table.version();
  }

  /** Embedded: the table itself. Shared: a handle of upkeep's own on it, opened once per table. */
  private async upkeepHandle(table: lancedb.Table): Promise<Upkept> {
    if (this.upkept?.name !== table.name) {
      this.upkept?.close();
      const own = this.shared ? await this.shared.openTable(table.name) : table;
      this.upkept = { name: table.name, table: own, close: () => own !== table && own.close(), horizon: new PruneHorizon(this.keepMs), settled: undefined, prunedTo: 0, prunedAt: 0 };
    }
    return this.upkept;
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
      if (this.closed) return;
      this.optimize().catch((err: unknown) => this.log?.warn({ err }, 'pruning old table versions failed; it is retried after the next write'));
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
   * What writers call after each write: an optimize `optimizeGapMs()` after the first write it does not cover
   * yet, so a burst of small documents shares one index update instead of each adding an index segment. Not at
   * once after an idle spell either: a burst's first document would pay one whole pass (most of it the
   * full-text index's update, about the same whatever the rows added: docs/BENCHMARKS.md#search-latency) and the rest of the
   * burst another. Rows written meanwhile are already searchable (LanceDB scans unindexed rows); this only
   * keeps scans short.
   */
  optimizeSoon(): void {
    if (this.timer || this.closed || !this.table || !this.upkeeper()) return;
    const wait = this.optimizeGapMs();
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
    for (const unsubscribe of this.subscriptions) unsubscribe();
    clearTimeout(this.remoteRefresh);
    clearTimeout(this.timer);
    clearTimeout(this.pruneTimer);
    this.timer = undefined;
    await this.writing;
    await (this.nextPass ?? this.passing)?.catch(() => undefined);
    await this.refreshing?.catch(() => undefined);
    this.upkept?.close();
    this.upkept = undefined;
  }

  deleteDocument(documentId: string): Promise<void> {
    return this.deleteWhere(`document_id = ${lit(documentId)}`);
  }

  /** The ids of the documents that have rows here now: one column read through (dear at a million rows). */
  async documentIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    const table = this.table;
    if (!table) return ids;
    const batches = table.query().select(['document_id']) as AsyncIterable<{ numRows: number; getChild(name: string): { get(i: number): unknown } | null }>;
    for await (const batch of batches) {
      const column = batch.getChild('document_id')!;
      for (let i = 0; i < batch.numRows; i++) ids.add(column.get(i) as string);
    }
    return ids;
  }

  /** Removes every row of these documents (a copy starting them over, rows left by deleted ones), a few hundred per commit. */
  async deleteDocuments(documentIds: string[]): Promise<void> {
    for (let i = 0; i < documentIds.length; i += 500) await this.deleteWhere(`document_id IN (${documentIds.slice(i, i + 500).map(lit).join(', ')})`);
  }

  /**
   * Appends Arrow record batches read from another library's table, in one commit (inside the write queue):
   * columns matched to this table's by name, one the rows lack taken from `defaults` (see conformBatch). No
   * optimize is scheduled: a bulk load calls `optimize()` once, after its last batch.
   */
  protected async appendBatches(table: lancedb.Table, batches: RecordBatch[], defaults: ColumnDefaults = {}): Promise<void> {
    const schema = (await table.schema()) as unknown as Schema;
    const rows = tableOf(
      schema,
      batches.filter((b) => b.numRows > 0).map((b) => conformBatch(b, schema, defaults)),
    );
    await this.commit(() => table.add(rows as unknown as lancedb.Data));
  }

  deleteProject(projectId: string): Promise<void> {
    return this.deleteWhere(`project_id = ${lit(projectId)}`);
  }

  /**
   * Moves a document's rows to another project in one commit (a single update), so any search reads all of them
   * under one project or all under the other, never some of each. Rows rewritten by the update are searchable at
   * once (scanned) and folded into the indexes by the next optimize.
   */
  moveDocument(documentId: string, projectId: string): Promise<void> {
    return this.updateDocuments([documentId], { project_id: lit(projectId) });
  }

  /**
   * Sets columns (each a LanceDB SQL expression: see sqlValue) on every row of these documents in one commit: a
   * search reads all of a document's rows as they were or all as they are. Rows rewritten by the update are
   * searchable at once (scanned) and folded into the indexes by the next optimize.
   */
  protected updateDocuments(documentIds: readonly string[], valuesSql: Record<string, string>): Promise<void> {
    return this.serial(async () => {
      const table = this.table;
      if (!table || documentIds.length === 0) return;
      await this.commit(() => table.update({ where: inList('document_id', documentIds), valuesSql }), table);
      this.optimizeSoon();
    });
  }

  private deleteWhere(predicate: string): Promise<void> {
    return this.serial(async () => {
      const table = this.table;
      if (table) await this.commit(() => table.delete(predicate), table);
    });
  }
}
