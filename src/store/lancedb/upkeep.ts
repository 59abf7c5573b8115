/**
 * Which process optimizes and prunes the tables when several write them (shared mode): the holder of one lease
 * (`Locks.tryAcquire`). Compaction and version cleanup rewrite and delete files every writer depends on; run by
 * two processes at once they conflict, and a prune by a process that does not know another's in-flight writes
 * could delete what it is about to commit. The others try again now and then, so a successor takes over when
 * the holder dies or lets go.
 */
import type { Lease, Locks } from '../coordination.js';

export const UPKEEP_LEASE = 'lancedb-upkeep';

export class UpkeepLeader {
  private lease: Lease | null = null;
  private timer: NodeJS.Timeout | undefined;
  private trying: Promise<void> | undefined;
  private stopped = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly locks: Locks,
    private readonly log?: { warn(obj: object, msg: string): void },
    /** How often a process without the lease tries to take it. */
    private readonly retryMs = 30_000,
  ) {}

  /** Tries now, then every `retryMs` while another process holds it. */
  start(): Promise<void> {
    this.timer = setInterval(() => void this.attempt(), this.retryMs);
    this.timer.unref();
    return this.attempt();
  }

  /** True while this process holds the lease (false as soon as it is lost). */
  isLeader(): boolean {
    return !this.stopped && (this.lease?.held() ?? false);
  }

  /** Called each time this process becomes the leader (to catch up on upkeep others left). */
  onAcquired(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private attempt(): Promise<void> {
    this.trying ??= (async () => {
      if (this.stopped || this.lease?.held()) return;
      this.lease = null;
      try {
        this.lease = await this.locks.tryAcquire(UPKEEP_LEASE);
      } catch (err) {
        this.log?.warn({ err }, 'could not try for the index upkeep lease; trying again later');
        return;
      }
      if (this.stopped) {
        await this.lease?.release();
        this.lease = null;
        return;
      }
      if (this.lease) for (const listener of this.listeners) listener();
    })().finally(() => (this.trying = undefined));
    return this.trying;
  }

  /** Lets go of the lease (another process takes over at its next try). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.trying;
    await this.lease?.release();
    this.lease = null;
  }
}
