/**
 * What processes sharing one library coordinate through: named locks, a leader for background upkeep, and
 * events. Embedded mode has one daemon per data dir (data-dir-lock.ts), so the in-process versions here are
 * exact; shared mode (several replicas on PostgreSQL) implements the same interfaces with advisory locks and
 * LISTEN/NOTIFY (store/sql/pg-locks.ts, pg-events.ts), so callers never know which they have. The database
 * handle (store/sql/database.ts) hands out the pair that fits it.
 */

/** What is announced between processes. Payloads are short strings (ids), never secrets. */
export type EventChannel =
  /** A job was queued or handed back: idle workers look for work. Payload: the document id. */
  | 'jobs'
  /** A document reached ready or failed (or was deleted): `?wait=true` uploads wake, readers refresh. Payload: the document id. */
  | 'document_settled'
  /** The chunk index switched tables or embedder (a re-index finished). Payload: empty. */
  | 'index_changed'
  /** A source was added, changed or asked to sync now: schedulers look for due sources. Payload: the source id. */
  | 'sources'
  /** Mail was queued in the outbox: the sender looks for due mail. Payload: empty. */
  | 'mail';

export interface Events {
  /** Delivered to every subscriber of every process, this one included, at most once each; lost when nobody listens. */
  publish(channel: EventChannel, payload: string): Promise<void>;
  /**
   * Returns the unsubscribe function. A listener that throws does not stop delivery to others. A listener may
   * also be called with an empty payload: delivery had a gap (the connection carrying events to this process
   * was lost and is back, or was only just made), so whatever it waits for may have happened unannounced.
   */
  subscribe(channel: EventChannel, listener: (payload: string) => void): () => void;
}

export interface Lease {
  release(): Promise<void>;
  /** False once the lease was lost (the connection holding it dropped): the holder must stop acting as leader. */
  held(): boolean;
}

export interface Locks {
  /**
   * Runs `fn` while holding the named lock, exclusive across every process sharing the library. Meant for short
   * critical sections: on PostgreSQL the lock lives on a connection, and ends with it if that connection fails.
   */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Takes the named lock if nobody holds it and keeps it until `release()` (or the process dies): how exactly
   * one process is chosen for upkeep such as index optimization. Null when another holder has it.
   *
   * `shared`: any number of shared holders at once, but none while an exclusive one holds it (and no exclusive
   * one while any shared one does): how every replica marks a library as in use, so that `docsearch migrate`,
   * which takes it exclusively, starts only when none runs, and none starts while it copies.
   */
  tryAcquire(key: string, mode?: LeaseMode): Promise<Lease | null>;
}

export type LeaseMode = 'exclusive' | 'shared';

/** One process: a lock is a promise chain per key. */
export class LocalLocks implements Locks {
  private readonly tails = new Map<string, Promise<unknown>>();
  /** Per key: held exclusively, or by this many shared holders. */
  private readonly leased = new Map<string, 'exclusive' | number>();

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  async tryAcquire(key: string, mode: LeaseMode = 'exclusive'): Promise<Lease | null> {
    const now = this.leased.get(key);
    if (now === 'exclusive' || (now !== undefined && mode === 'exclusive')) return null;
    this.leased.set(key, mode === 'exclusive' ? 'exclusive' : (now ?? 0) + 1);
    let held = true;
    return {
      release: async () => {
        if (!held) return;
        held = false;
        const left = this.leased.get(key);
        if (typeof left === 'number' && left > 1) this.leased.set(key, left - 1);
        else this.leased.delete(key);
      },
      held: () => held,
    };
  }
}

/** One process: events are function calls. */
export class LocalEvents implements Events {
  private readonly listeners = new Map<EventChannel, Set<(payload: string) => void>>();

  async publish(channel: EventChannel, payload: string): Promise<void> {
    for (const listener of this.listeners.get(channel) ?? []) {
      try {
        listener(payload);
      } catch {
        // one listener's failure is its own
      }
    }
  }

  subscribe(channel: EventChannel, listener: (payload: string) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }
}
