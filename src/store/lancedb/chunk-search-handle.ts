/**
 * The handle searches read, in shared mode with a file cache: a second handle on the table, through the copy on this
 * replica's disk or the block cache's relay, kept caught up with this replica's commits and other replicas' writes
 * without putting a check of the store on every search's path.
 */
import type * as lancedb from '@lancedb/lancedb';
import type { VectorStore } from './connection.js';
import type { TableLog } from './owned-table.js';

/** Shared mode with a file cache: a second handle on the table, which searches read through the cache. */
interface SearchHandle {
  table: lancedb.Table;
  /** The main handle this one follows. */
  of: lancedb.Table;
  /** The main handle's commit and refresh counts this one has caught up with. */
  commits: number;
  refreshes: number;
  /** When this handle's view was last checked against the store. */
  checkedAt: number;
  /** The last change of this handle's version, done or under way. */
  moving: Promise<void>;
}

/** How long a replaced search handle stays open for the searches that were using it. */
const RETIRED_HANDLE_MS = 60_000;
/** While the copy of a table cannot be updated, every search finds out; the log says so once a minute. */
const COPY_FAILURE_LOG_MS = 60_000;

/** One change of a search handle's version at a time, in order: a check finishing late never undoes a newer one. */
function moveHandle(handle: SearchHandle, to: () => Promise<void>): Promise<void> {
  return (handle.moving = handle.moving.then(to, to));
}

/** Where the main handle is: the table writes and counts use, and how far it has moved (see OwnedRowsTable). */
export interface MainView {
  table: lancedb.Table | undefined;
  commits: number;
  refreshes: number;
  committedVersion: number | undefined;
}

export class SearchHandles {
  /** Shared mode with a file cache: the table as searches read it, through the cache (see `table`). */
  private searching: Promise<SearchHandle> | undefined;
  /** When a search last logged that the copy of the table could not be updated (see `table`). */
  private copyFailedAt = 0;
  /** Search handles a newer one replaced, each closed by its timer once searches on it are done. */
  private readonly retired = new Map<NodeJS.Timeout, lancedb.Table>();

  constructor(
    private readonly store: VectorStore,
    private readonly main: () => MainView,
    private readonly log: TableLog | undefined,
    private readonly kind: string,
  ) {}

  /**
   * The handle searches read: the table itself, or with a file cache a second handle (VectorStore.searchConnection)
   * on the copy of the table on this replica's disk (`store.mirror`) or on the table through the block cache's
   * relay, opened once per table handle. A search waits for it to catch up with this replica's own commits and
   * with the table's refreshes on other replicas' `document_settled` events: through the relay, the commit's
   * version is checked out by number (one manifest read) and a refresh checks for the latest version; a copy is
   * brought up to date first, then moved to its latest version (only when a search asks: a replica ingesting with
   * nobody searching lists nothing). Past `searchRecheckMs` without either, a search starts a check (`recheck`)
   * and answers from the view it has: a check lists the table's versions, a round trip to the store that was on the
   * path of every search in the second after the last one (bench/results/search.md#chunks-table-figures).
   */
  async table(): Promise<lancedb.Table | undefined> {
    const { table } = this.main();
    if (!table || this.store.searchConnection === this.store.connection) return table;
    if (!this.store.mirror) return this.handle(table);
    try {
      return await this.handle(table);
    } catch (err) {
      // The copy could not be brought up to date (this replica's disk full, its cache directory gone): the store
      // itself answers, slower, until it can; a store that is down fails this read as well.
      if (Date.now() - this.copyFailedAt > COPY_FAILURE_LOG_MS) {
        this.copyFailedAt = Date.now();
        this.log?.warn({ err, table: this.kind }, 'could not update the copy of the index on this replica; searching the store directly meanwhile');
      }
      // Refreshes leave the main handle to its own consistency interval (see ChunkIndex.refreshView).
      await table.checkoutLatest();
      return table;
    }
  }

  private async handle(table: lancedb.Table): Promise<lancedb.Table> {
    const { commits, refreshes } = this.main();
    const mirror = this.store.mirror;
    let pending = this.searching;
    while ((await pending?.catch(() => undefined))?.of !== table) {
      // Another search may have opened one for this table meanwhile: use it rather than open a second.
      if (this.searching !== pending) {
        pending = this.searching;
        continue;
      }
      const previous = pending;
      pending = this.searching = (mirror ? mirror.sync(table.name) : Promise.resolve())
        .then(() => this.store.searchConnection.openTable(table.name))
        .then((t) => ({ table: t, of: table, commits, refreshes, checkedAt: Date.now(), moving: Promise.resolve() }));
      void previous?.then((p) => p.table.close()).catch(() => undefined);
      break;
    }
    // A failed open is this search's error; the next search tries again.
    const handle = await pending!.catch((err: unknown) => {
      if (this.searching === pending) this.searching = undefined;
      throw err;
    });
    // Marked caught up before the move, so that searches meanwhile do not start another; a move that fails (the
    // store unreachable) is unmarked, or the handle would stay behind until a background check.
    const catchUp = (mark: 'commits' | 'refreshes', to: () => Promise<void>) =>
      moveHandle(handle, to).catch((err: unknown) => {
        handle[mark] = NaN;
        throw err;
      });
    const recheckMs = this.store.searchRecheckMs;
    if (handle.refreshes !== refreshes || (mirror && handle.commits !== commits)) {
      const mark = handle.refreshes !== refreshes ? 'refreshes' : 'commits';
      Object.assign(handle, { refreshes, commits, checkedAt: Date.now() });
      await catchUp(mark, async () => {
        await mirror?.sync(table.name);
        await handle.table.checkoutLatest();
      });
    } else if (handle.commits !== commits) {
      handle.commits = commits;
      await catchUp('commits', async () => {
        const version = this.main().committedVersion ?? (await table.version());
        if (version > (await handle.table.version())) await handle.table.checkout(version);
      });
    } else if (mirror && recheckMs === 0) {
      // Every read checks the store.
      await catchUp('refreshes', () => mirror.sync(table.name).then(() => handle.table.checkoutLatest()));
    } else if (recheckMs !== undefined && Date.now() - handle.checkedAt > recheckMs) {
      handle.checkedAt = Date.now();
      void this.recheck(handle).catch((err: unknown) => this.log?.warn({ err, table: this.kind }, 'could not check the store for a newer version; a later search tries again'));
    }
    return handle.table;
  }

  /**
   * Checks the store for a newer version than the search handle's without holding searches up: LanceDB checks a
   * handle under its lock, so this opens the table afresh (its versions listed, or the copy brought up to date)
   * and, if that view is newer, has later searches use it. Searches already under way finish on the handle they
   * have, closed a while later.
   */
  private async recheck(handle: SearchHandle): Promise<void> {
    await this.store.mirror?.sync(handle.table.name);
    const fresh = await this.store.searchConnection.openTable(handle.table.name);
    await moveHandle(handle, async () => {
      if ((await this.searching?.catch(() => undefined)) !== handle || (await fresh.version()) <= (await handle.table.version())) {
        fresh.close();
        return;
      }
      const old = handle.table;
      handle.table = fresh;
      const timer = setTimeout(() => {
        this.retired.delete(timer);
        old.close();
      }, RETIRED_HANDLE_MS);
      timer.unref();
      this.retired.set(timer, old);
    });
  }

  /** Closes the search handle and those it replaced. */
  async close(): Promise<void> {
    (await this.searching?.catch(() => undefined))?.table.close();
    this.searching = undefined;
    for (const [timer, table] of this.retired) {
      clearTimeout(timer);
      table.close();
    }
    this.retired.clear();
  }
}
