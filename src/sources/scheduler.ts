/**
 * Runs each source's passes on its schedule, on exactly one process at a time: the process that takes the
 * source's lock (`Locks.tryAcquire`; an advisory lock on PostgreSQL, which ends with its connection, so a replica
 * killed mid-pass frees the source at once) runs the pass; the others pass over it and look again a little later.
 * A pass that fails is tried again sooner than its schedule, backing off (30 s doubling, up to the schedule); one
 * that stopped midway (shutdown, lost lock) is left due, so the next holder continues it.
 *
 * Schedulers sleep until the next source falls due, and wake when a source is added, changed or asked to sync
 * (Events channel `sources`, from any replica).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withAuditContext } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Events, Lease, Locks } from '../store/coordination.js';
import type { SourceRecord, SourceStore } from '../store/sql/sources.js';
import { FAILING_AFTER, type SourceAlerts } from './alerts.js';
import type { SourceEnv } from './kind.js';
import type { Reach } from './reach.js';
import type { SourceService } from './service.js';
import { type ItemAction, type PassDeps, PassStopped, runPass } from './sync.js';
import { cutUnits } from '../core/code-points.js';

export type PassOutcomeLabel = 'ok' | 'paused' | 'error';

/** What the daemon's metrics are told. */
export interface SourceMetrics {
  pass(kind: string, outcome: PassOutcomeLabel, seconds: number): void;
  item(kind: string, action: ItemAction): void;
}

export interface SchedulerDeps extends Omit<PassDeps, 'mayGoOn' | 'holdsLock' | 'onItem'> {
  service: SourceService;
  locks: Locks;
  events: Events;
  reach: Reach;
  roots: readonly string[];
  /** The server's own folders (SourceEnv.hidden). */
  hidden: readonly string[];
  /** Where connections keep things between passes (`<data-dir>/sources/<id>`). */
  scratchRoot: string;
  log: Logger;
  metrics?: SourceMetrics;
  /** Tells the source's people when it holds deletions or keeps failing. */
  alerts?: SourceAlerts;
}

export interface SchedulerOptions {
  /** Passes this process runs at once (default 2). */
  concurrency?: number;
  /** Longest sleep (default 30 s): due sources are found without an announcement too. */
  pollMs?: number;
}

/** How soon a pass that found an item still being indexed runs again, at most. */
const DEFERRED_RETRY_MS = 60_000;
/** The first retry after a failed pass; doubled per failure, up to the source's schedule. */
const RETRY_BASE_MS = 30_000;
/** How soon a due source another process holds is tried again (it may have died: its lock then went with it). */
const HELD_RETRY_MS = 10_000;

export const sourceLock = (id: string) => `source:${id}`;

export class SourceScheduler {
  /** Names this process in a source's `syncing_on` and in the log. */
  readonly owner = `s_${randomBytes(6).toString('hex')}`;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Sources another process holds, and when to try them again. */
  private readonly skipUntil = new Map<string, number>();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly deps: SchedulerDeps,
    options: SchedulerOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 2;
    this.pollMs = options.pollMs ?? 30_000;
  }

  async start(): Promise<void> {
    await mkdir(this.deps.scratchRoot, { recursive: true, mode: 0o700 });
    this.unsubscribe = this.deps.events.subscribe('sources', (id) => {
      if (id) this.skipUntil.delete(id);
      this.wake();
    });
    this.loop = this.run().catch((err: unknown) => this.deps.log.error({ err }, 'the source scheduler stopped unexpectedly'));
  }

  /** Stops starting passes, ends the running ones at their next item and waits for them (up to `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const r of this.running.values()) r.abort.abort();
    this.wake();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([this.loop, ...[...this.running.values()].map((r) => r.done)]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    await this.sweepScratch().catch((err: unknown) => this.deps.log.warn({ err }, 'could not sweep the scratch folders of removed sources'));
    while (!this.stopped) {
      this.woken = false;
      let wakeAt = this.deps.now() + this.pollMs;
      try {
        wakeAt = await this.startDue(wakeAt);
      } catch (err) {
        this.deps.log.warn({ err }, 'the source scheduler could not look for due sources; trying again');
      }
      if (this.woken || this.stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => resolve(), Math.max(50, wakeAt - this.deps.now()));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** Starts what is due and free; returns when to look again. */
  private async startDue(wakeAt: number): Promise<number> {
    const now = this.deps.now();
    for (const [id, until] of this.skipUntil) if (until <= now) this.skipUntil.delete(id);
    if (this.running.size < this.concurrency) {
      for (const source of await this.deps.store.due(50)) {
        if (this.running.size >= this.concurrency || this.stopped) break;
        if (this.running.has(source.id) || this.skipUntil.has(source.id)) continue;
        const lease = await this.deps.locks.tryAcquire(sourceLock(source.id));
        if (!lease) {
          this.skipUntil.set(source.id, now + Math.min(source.everyMs, HELD_RETRY_MS));
          continue;
        }
        this.begin(source, lease);
      }
    }
    const next = await this.deps.store.nextDueAt();
    if (next !== null && next > now) wakeAt = Math.min(wakeAt, next);
    for (const until of this.skipUntil.values()) wakeAt = Math.min(wakeAt, until);
    return wakeAt;
  }

  private begin(source: SourceRecord, lease: Lease): void {
    const abort = new AbortController();
    // What the pass does to documents is the source's doing: its audit events say which source (by: source).
    const context = { actor: null, via: 'system' as const, by: 'source' as const, details: { source_id: source.id, source_url: source.url } };
    const done = withAuditContext(context, () => this.pass(source, lease, abort.signal))
      .catch((err: unknown) => this.deps.log.error({ err, source_id: source.id }, 'a source pass failed unexpectedly'))
      .finally(async () => {
        await lease.release().catch(() => undefined);
        this.running.delete(source.id);
        this.wake();
      });
    this.running.set(source.id, { abort, done });
  }

  private async pass(listed: SourceRecord, lease: Lease, signal: AbortSignal): Promise<void> {
    const { store, log, now, service } = this.deps;
    const kind = service.kind(listed);
    // Under the lock: another process may have run it between the listing of due sources and now.
    const source = await store.beginPass(listed.id, this.owner, kind.resumable);
    if (!source) return;
    const startedAt = source.syncingSince!;
    const started = performance.now();
    const base = { source_id: source.id, project_id: source.projectId, kind: source.kind, owner: this.owner };
    log.info({ event: 'source.sync_started', ...base, pass: source.pass }, 'source pass started');
    const mayGoOn = () => !signal.aborted && lease.held();
    const env: SourceEnv = {
      reach: this.deps.reach,
      roots: this.deps.roots,
      hidden: this.deps.hidden,
      scratchDir: join(this.deps.scratchRoot, source.id),
      maxItemBytes: this.deps.maxItemBytes,
      signal,
      now,
    };
    let conn: Awaited<ReturnType<typeof kind.connect>> | undefined;
    try {
      await mkdir(env.scratchDir, { recursive: true, mode: 0o700 });
      conn = await kind.connect(service.setup(source), env);
      const outcome = await runPass(source, kind, conn, { ...this.deps, mayGoOn, holdsLock: () => lease.held(), onItem: (action) => this.deps.metrics?.item(source.kind, action) });
      const { result, held } = outcome;
      const nextSyncAt = now() + (result.deferred > 0 ? Math.min(source.everyMs, DEFERRED_RETRY_MS) : source.everyMs);
      await store.endPass(source.id, startedAt, { cursor: outcome.cursor, result, error: null, failures: 0, held, nextSyncAt, confirmed: source.confirmDeletions, ...(outcome.pausedReason ? { pausedReason: outcome.pausedReason } : {}) });
      const seconds = (performance.now() - started) / 1000;
      this.deps.metrics?.pass(source.kind, held || outcome.pausedReason ? 'paused' : 'ok', seconds);
      if (outcome.pausedReason) log.warn({ event: 'source.paused', ...base, reason: outcome.pausedReason }, 'source paused: over a quota');
      if (held) log.warn({ event: 'source.paused', ...base, reason: held.reason, held: held.count }, 'the deletion guard holds this source\'s deletions');
      log.info({ event: 'source.synced', ...base, ...result, paused: held !== null }, 'source pass finished');
      // A quota pause ends the episode's passes (a paused source runs none until resumed): told each time it pauses.
      if (outcome.pausedReason) await this.alert(() => this.deps.alerts?.paused(source, outcome.pausedReason!), base);
      // Told once, when the guard begins holding (a hold that goes on is on the source's page and in the bell).
      if (held && source.heldDeletions === null) await this.alert(() => this.deps.alerts?.held(source, held), base);
    } catch (err) {
      if (err instanceof PassStopped || !mayGoOn()) {
        // Stopping, or the lock went with its connection (another process may hold it now): record nothing more
        // than that this process no longer runs it, and only while the lock is still ours.
        if (lease.held()) await store.endPass(source.id, startedAt, { cursor: source.cursor, result: null, error: source.error, failures: source.failures, nextSyncAt: source.nextSyncAt, keepOpen: true });
        log.info({ event: 'source.sync_stopped', ...base }, 'source pass stopped before the end; the next pass continues it');
        return;
      }
      if (!(await store.getById(source.id))) {
        // Removed while its pass ran (its next item could not be recorded): the removal deleted or kept the documents
        // it found; one the pass made after that is none of them, and goes, or a removal with its documents would
        // leave one behind as an upload.
        for (const doc of await this.deps.documents.ofSource(source.id)) await this.deps.ingest.delete(doc);
        log.info({ event: 'source.sync_stopped', ...base }, 'source removed while its pass ran');
        return;
      }
      const failures = source.failures + 1;
      const message = describe(err);
      const retryMs = Math.min(source.everyMs, RETRY_BASE_MS * 2 ** Math.min(failures - 1, 20));
      await store.endPass(source.id, startedAt, { cursor: source.cursor, result: null, error: message, failures, nextSyncAt: now() + retryMs, keepOpen: true });
      this.deps.metrics?.pass(source.kind, 'error', (performance.now() - started) / 1000);
      log.warn({ event: 'source.failed', ...base, error: message, failures, retry_in_ms: retryMs, err }, 'source pass failed');
      if (failures === FAILING_AFTER) await this.alert(() => this.deps.alerts?.failing(source, message, failures), base);
    } finally {
      await conn?.close().catch(() => undefined);
    }
  }

  /** Tells the source's people; a failure to do so is logged and does not fail the pass. */
  private async alert(send: () => Promise<void> | undefined, base: Record<string, unknown>): Promise<void> {
    try {
      await send();
    } catch (err) {
      this.deps.log.warn({ event: 'source.alert_failed', ...base, err }, "could not tell the source's people");
    }
  }

  /** Scratch folders of sources that no longer exist (removed while another replica had a clone). */
  private async sweepScratch(): Promise<void> {
    for (const entry of await readdir(this.deps.scratchRoot)) {
      if (!(await this.deps.store.getById(entry))) await rm(join(this.deps.scratchRoot, entry), { recursive: true, force: true });
    }
  }
}

/** An error as its source's owner reads it. */
function describe(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  return message.length > 1000 ? `${cutUnits(message, 1000)}…` : message;
}
