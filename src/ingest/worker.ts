/**
 * The ingest worker: claims jobs from the durable queue (jobs table) under a lease, renews the lease with a
 * heartbeat while the pipeline runs, and records the outcome on the document:
 *
 * - ready: chunks written, counts and warnings stored, event `document.ingested`;
 * - transient failure (a model server that is down, a write that failed): the job is retried with exponential
 *   backoff, at most `maxAttempts` times, event `ingest.failed` with `retry_at`;
 * - permanent failure (the file cannot be parsed, the model rejects the input): the document is failed with
 *   a message for the person who uploaded it, event `ingest.failed`.
 *
 * Stopping ends a running job at its next progress step and hands it back to the queue without counting the
 * attempt (a graceful restart is not a failure). A job cut off by a crash is recovered at the next start when
 * this process is alone on the queue (embedded mode: JobStore.recoverForeignLeases), and otherwise by any
 * worker once its lease expires (shared mode: the other owners are live replicas); that claim does count.
 *
 * The lease is the right to record the job's outcome. A worker whose heartbeat finds the job taken, or that has
 * not renewed its lease for three quarters of its length (PostgreSQL unreachable, the process stalled), stops at
 * the next progress step, before another worker may claim the job, and records nothing (LeaseLost).
 *
 * Workers sleep until a job is announced (Events channel `jobs`: from this process or, in shared mode, any
 * replica through LISTEN/NOTIFY), or at the latest for `idlePollMs`, the safety poll.
 *
 * A full disk (SQLite or LanceDB out of space) is nobody's document's fault: the job goes back to the queue
 * without counting an attempt, the loops back off (1 s doubling to 5 s) and retry, and `outOfSpace()` is true
 * meanwhile (health), so ingestion resumes by itself within seconds of space returning. An unreachable
 * database (PostgreSQL restarting) or object store (S3 away or answering 5xx) is waited out the same way; while
 * the object store is away, the loops ask it whether it is back (`storageUp`) before they claim anything.
 *
 * A job handed back either way is marked `released`: its next run clears whatever an earlier run wrote.
 *
 * Any other error never ends a loop. One while a job is held, outside the pipeline too (making an e-mail's
 * attachments, marking it ready, a write another process's lock refused), is that job's transient failure: an
 * attempt, retried or failed as above. One outside any job (a claim, or the bookkeeping of a failure, refused) is
 * waited out as a pause is, logged as it begins and ends (once the loop's next claim is written, or its job marked
 * processing), and `failingSince()` tells health meanwhile.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { isDatabaseUnavailable } from '../core/database-unavailable.js';
import { isDiskFull } from '../core/disk-full.js';
import type { Yielder } from '../core/foreground.js';
import { isModelError } from '../models/errors.js';
import type { Logger } from '../core/logger.js';
import type { Events } from '../store/coordination.js';
import type { DocumentRecord, DocumentStore } from '../store/sql/documents.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import { isStorageUnavailable } from '../store/objects/object-store.js';
import { type Job, type JobStore, LeaseLost } from '../store/sql/jobs.js';
import { isParseError } from './parsers/errors.js';
import { DocumentGone, type PipelineDeps, type PipelineResult, runPipeline } from './pipeline.js';
import type { Attachment } from './types.js';
import { ChunkWriter } from './write.js';

/** Makes documents of the files a document carries (an e-mail's attachments), linked to it (DocumentService). */
export interface AttachmentSink {
  /**
   * Stores each file and queues a document for it; running it again for the same files makes no new documents.
   * Returns warnings for the carrier: the files not kept (past a quota).
   */
  acceptAttachments(carrier: DocumentRecord, files: Attachment[]): Promise<string[]>;
  /** Deletes the documents attached to `carrier` (it was deleted while they were being made). */
  removeAttachments(carrier: DocumentRecord): Promise<void>;
}

export interface IngestWorkerOptions {
  /**
   * Documents processed at once. Their texts share the embedder's micro-batches and their rows share commits,
   * so several small documents cost about what their text costs the model; a big document takes one of them.
   */
  concurrency: number;
  /** Least time between two progress writes of one document (default 1000 ms; 0 writes every step). */
  progressEveryMs?: number;
  leaseMs?: number;
  heartbeatMs?: number;
  /** Claims of one job before it fails for good (a crash mid-job counts as an attempt). */
  maxAttempts?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Longest sleep when the queue looks empty (announced jobs wake the worker at once). */
  idlePollMs?: number;
  /**
   * Other processes claim from the same queue (shared mode). Then a lease this process does not own belongs to
   * a live replica, or comes back when it expires: the start-up recovery of every foreign lease is skipped.
   */
  sharedQueue?: boolean;
  /** False while ingestion must wait (a re-index is needed or running). */
  canClaim?: () => boolean;
}

export interface IngestWorkerDeps {
  jobs: JobStore;
  documents: DocumentStore;
  pipeline: Omit<PipelineDeps, 'writer' | 'chunks'> & { chunks: ChunkIndex };
  log: Logger;
  now: Clock;
  /** Where an e-mail's attachments become documents; without it they are not indexed. */
  attachments?: AttachmentSink;
  /** The documents' labels, which their chunks carry (without it, none). */
  labels?: { idsOf(documentId: string): Promise<string[]> };
  /** Called when a document reaches ready or failed (wakes `?wait=true` uploads). */
  onSettled?: (documentId: string) => void;
  /** Chunk commits give way to searches in flight (core/foreground.ts). */
  background?: Yielder;
  /** Where jobs are announced (channel `jobs`): new ones wake the idle loops, and jobs handed back are announced. */
  events?: Events;
  /**
   * Whether the object store answers now: a cheap request (S3's HeadBucket), asked only while ingestion is paused for
   * the store. Without it, claiming a job is how the worker finds out.
   */
  storageUp?: () => Promise<boolean>;
  /**
   * Free bytes on the data directory's disk (statfs), asked only while ingestion is paused for a full disk. Without
   * it, claiming a job is how the worker finds out.
   */
  diskFree?: () => Promise<number>;
  /** Told each outcome this worker records (the daemon's metrics). */
  outcomes?: {
    ingested(outcome: 'ready' | 'failed', chunks?: number): void;
    retried(): void;
  };
}

/**
 * A full disk, an unreachable database or object store: waited out (the job goes back to the queue once a loop gets
 * through again), never counted as one of a document's attempts, so an outage however long fails no document. Each
 * is logged once as it begins and once as it ends. The store comes first: its errors are socket errors underneath
 * too, which would read as the database.
 */
const PAUSES = [
  {
    kind: 'storage',
    is: isStorageUnavailable,
    begins: ['ingest.storage_unavailable', 'the file store cannot be reached: ingestion paused until it is back'],
    ends: ['ingest.storage_back', 'the file store is back: ingestion resumed'],
  },
  {
    kind: 'database',
    is: isDatabaseUnavailable,
    begins: ['ingest.database_unavailable', 'the database cannot be reached: ingestion paused until it is back'],
    ends: ['ingest.database_back', 'the database is back: ingestion resumed'],
  },
  {
    kind: 'disk',
    is: isDiskFull,
    begins: ['ingest.disk_full', 'out of disk space: ingestion paused until space is freed'],
    ends: ['ingest.disk_space_back', 'disk space is back: ingestion resumed'],
  },
] as const;
type PauseKind = (typeof PAUSES)[number]['kind'];

const waitedOut = (err: unknown): boolean => PAUSES.some((p) => p.is(err));

/** How much more free space than at the last full-disk failure makes a try worth it (diskFreed). */
const DISK_FREED_BYTES = 1024 * 1024;
/** The longest a full-disk pause waits for statfs to show more space before trying again anyway. */
const MAX_DISK_WAIT_MS = 5 * 60_000;

export class IngestWorker {
  readonly owner = `w_${randomBytes(6).toString('hex')}`;
  private readonly opts: Required<IngestWorkerOptions>;
  private loops: Promise<void>[] = [];
  private stopping = false;
  /** Idle loops, each waiting to be woken (or for its timer). */
  private readonly sleepers: (() => void)[] = [];
  /** Loops backing off in a pause, each waiting for its timer (or stop()). */
  private readonly backingOff: (() => void)[] = [];
  /** Wake-ups that found no idle loop: the next loop about to sleep claims again instead. */
  private pendingWakes = 0;
  /**
   * Loops failing outside any job (an unexpected error in a claim or a failure's bookkeeping), by loop, and since when;
   * a loop's entry is cleared once it gets through a job or an empty queue again (another loop's luck says nothing of it).
   */
  private readonly failing = new Map<number, number>();
  private lastReclaim = 0;
  /**
   * When each pause (PAUSES: the disk full, the database or the object store away) began; cleared once a loop gets
   * through a job or an empty queue.
   */
  private readonly pausedSince = new Map<PauseKind, number>();
  /** The wait for the object store to answer again, shared by every loop paused for it (storageAnswers). */
  private storageBack: Promise<boolean> | undefined;
  /** Free bytes on the disk when a try last met it full (diskFreed), and the wait for more, shared by every loop. */
  private freeWhenFull: number | undefined;
  private diskBack: Promise<boolean> | undefined;
  private unsubscribe: (() => void) | undefined;
  private recovered = false;
  /** Jobs running now, by job id. */
  readonly running = new Map<number, string>();
  /** Commits the chunk rows of every running document in groups. */
  readonly writer: ChunkWriter;
  private readonly pipeline: PipelineDeps;

  constructor(
    private readonly deps: IngestWorkerDeps,
    options: IngestWorkerOptions,
  ) {
    this.opts = {
      concurrency: options.concurrency,
      leaseMs: options.leaseMs ?? 120_000,
      heartbeatMs: options.heartbeatMs ?? 15_000,
      maxAttempts: options.maxAttempts ?? 5,
      backoffBaseMs: options.backoffBaseMs ?? 5_000,
      backoffMaxMs: options.backoffMaxMs ?? 10 * 60_000,
      idlePollMs: options.idlePollMs ?? 2_000,
      sharedQueue: options.sharedQueue ?? false,
      canClaim: options.canClaim ?? (() => true),
      progressEveryMs: options.progressEveryMs ?? 1000,
    };
    this.writer = new ChunkWriter(deps.pipeline.chunks, deps.pipeline.embedder, deps.background);
    this.pipeline = { ...deps.pipeline, writer: this.writer };
  }

  /** Recovers jobs left by a previous (killed) process, then starts the claim loops. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.events?.subscribe('jobs', () => this.notify());
    await this.recover().catch((err: unknown) => {
      if (!waitedOut(err)) throw err; // retried by the loops once they can write
    });
    for (let i = 0; i < this.opts.concurrency; i++) this.loops.push(this.supervise(i));
  }

  /**
   * A job was just queued (or handed back): wakes one idle loop. One, not all: in shared mode every replica
   * hears each announcement, and waking all their loops made many claim transactions per document where one
   * takes it (bench/results/scale.md). A loop that gets a job wakes the next idle one, so a backlog still fills
   * every loop. A wake-up with no loop idle is kept for the next loop about to sleep: an announcement that
   * arrives while a loop is between an empty claim and its sleep is not lost.
   */
  notify(): void {
    if (!this.wakeOne()) this.pendingWakes = Math.min(this.pendingWakes + 1, this.opts.concurrency);
  }

  private wakeOne(): boolean {
    const sleeper = this.sleepers.shift();
    sleeper?.();
    return sleeper !== undefined;
  }

  /** True while ingestion waits for disk space (health probe `storage`). */
  outOfSpace(): boolean {
    return this.pausedSince.has('disk');
  }

  /** Up while the loops run (health probe `queue`). */
  alive(): boolean {
    return this.loops.length > 0 && !this.stopping;
  }

  /** Since when a loop has been failing outside any job and retrying, or undefined (health probe `queue`). */
  failingSince(): number | undefined {
    return this.failing.size > 0 ? Math.min(...this.failing.values()) : undefined;
  }

  /**
   * Stops claiming, ends running jobs at their next progress step and waits (up to `graceMs`) until they have
   * been handed back: no embedding or index write of this worker is still running once this resolves.
   */
  async stop(graceMs = 60_000): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    for (const sleeper of [...this.sleepers.splice(0), ...this.backingOff.splice(0)]) sleeper();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.loops), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  /**
   * Waits `ms`, or less: an idle loop until a job is announced, a pause's backoff (`backOff`) only until the worker
   * stops. Announced jobs do not end a backoff: the loop's own hand-back announces one, which would end it at once
   * and run a pause's tries back to back.
   */
  private async sleep(ms: number, backOff = false): Promise<void> {
    if (this.stopping) return;
    if (!backOff && this.pendingWakes > 0) {
      this.pendingWakes--;
      return;
    }
    const waiting = backOff ? this.backingOff : this.sleepers;
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        const at = waiting.indexOf(wake);
        if (at >= 0) waiting.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(10, ms));
      waiting.push(wake);
    });
  }

  private async recover(): Promise<void> {
    if (this.recovered || this.opts.sharedQueue) return;
    const recovered = await this.deps.jobs.recoverForeignLeases(this.owner);
    this.recovered = true;
    if (recovered > 0) this.deps.log.info({ event: 'ingest.recovered', jobs: recovered }, 'recovered interrupted ingest jobs');
  }

  /** Tells idle workers (in every process) that jobs were handed back. */
  private announce(documentId: string): void {
    this.deps.events?.publish('jobs', documentId).catch((err: unknown) => this.deps.log.warn({ err }, 'could not announce a queued job'));
  }

  /**
   * Runs a claim loop; a full disk or an unreachable database anywhere in it (claim, pipeline, bookkeeping)
   * means wait and start over, and so does any other error that reaches it (failed): it never ends but with stop().
   */
  private async supervise(loop: number): Promise<void> {
    for (let wait = 1000; !this.stopping; wait = Math.min(wait * 2, 5000)) {
      try {
        await this.recover(); // done at start unless the disk was full or the database away then
        await this.loop(loop);
        return;
      } catch (err) {
        const pause = PAUSES.find((p) => p.is(err));
        if (!pause) this.failed(loop, err);
        else if (!this.pausedSince.has(pause.kind)) {
          this.pausedSince.set(pause.kind, this.deps.now());
          this.deps.log.error({ event: pause.begins[0], err }, pause.begins[1]);
        }
        if (pause?.kind === 'disk') this.freeWhenFull = await this.deps.diskFree?.().catch(() => undefined);
      }
      await this.sleep(wait, true);
      try {
        const requeued = await this.deps.documents.requeueIdleLeases(this.owner, [...this.running.keys()]);
        if (requeued > 0) {
          // A pause that goes on hands a job back at each try (the store's at its first only: storageAnswers); the
          // pause's begin and end are what is logged (PAUSES).
          this.deps.log.debug({ event: 'ingest.requeued', jobs: requeued }, 'jobs stopped by the pause are queued again');
          this.announce('');
        }
      } catch (err) {
        if (!waitedOut(err)) this.failed(loop, err);
      }
    }
  }

  /**
   * An error no job's handling took (a claim refused, a failure that could not be recorded): the loop backs off and
   * tries again, as in a pause, so a fault that passes costs seconds and never ingestion until a restart. Logged as the
   * first loop begins to fail and as the last gets through again (resumed), not at every try.
   */
  private failed(loop: number, err: unknown): void {
    if (this.failing.has(loop)) return;
    this.failing.set(loop, this.deps.now());
    if (this.failing.size === 1) this.deps.log.error({ event: 'ingest.worker_failing', err }, 'the ingest worker failed outside any document: retrying every few seconds');
  }

  private async loop(loop: number): Promise<void> {
    while (!this.stopping) {
      if (!this.opts.canClaim()) {
        await this.sleep(this.opts.idlePollMs);
        continue;
      }
      if (this.pausedSince.has('storage') && !(await this.storageAnswers())) continue;
      if (this.pausedSince.has('disk') && !(await this.diskFreed())) continue;
      const now = this.deps.now();
      if (now - this.lastReclaim > this.opts.leaseMs / 2) {
        this.lastReclaim = now;
        const reclaimed = await this.deps.jobs.reclaimExpired();
        if (reclaimed > 0) this.deps.log.info({ event: 'ingest.reclaimed', jobs: reclaimed }, 'jobs whose lease expired are queued again');
      }
      const job = await this.deps.jobs.claim(this.owner, this.opts.leaseMs);
      if (!job) {
        this.resumed(loop);
        const next = await this.deps.jobs.nextRunAt();
        await this.sleep(next === null ? this.opts.idlePollMs : Math.min(this.opts.idlePollMs, next - this.deps.now()));
        continue;
      }
      this.wakeOne(); // more may be queued: another loop looks, and the next wakes only if that one finds one too
      await this.runJob(job, loop);
      this.resumed(loop);
    }
  }

  /**
   * True once the object store answers its probe (at once without one), false if the worker stops first. While
   * ingestion is paused for the store, a job claimed would be read, parsed and embedded again only to fail at the
   * store, its document reading `processing` meanwhile: the loops wait here instead, on one probe at a time, every 1 s
   * doubling to 5 s. The pause itself ends as before, once a loop gets through a job or an empty queue.
   */
  private storageAnswers(): Promise<boolean> {
    const up = this.deps.storageUp;
    if (!up) return Promise.resolve(true);
    this.storageBack ??= (async () => {
      for (let wait = 1000; !this.stopping; wait = Math.min(wait * 2, 5000)) {
        if (await up().catch(() => false)) return true;
        await this.sleep(wait, true);
      }
      return false;
    })().finally(() => {
      this.storageBack = undefined;
    });
    return this.storageBack;
  }

  /**
   * True once the disk has more free space than when a try last met it full (DISK_FREED_BYTES more), or after
   * MAX_DISK_WAIT_MS (a quota statfs does not see); false if the worker stops first. As for the store
   * (`storageAnswers`): a job claimed on a disk as full as before would be read, parsed and embedded again only to
   * fail at the disk, every 1–5 s. Asked every 1 s doubling to 5 s, by one loop for all.
   */
  private diskFreed(): Promise<boolean> {
    const free = this.deps.diskFree;
    const full = this.freeWhenFull;
    if (!free || full === undefined) return Promise.resolve(true);
    this.diskBack ??= (async () => {
      const since = this.deps.now();
      for (let wait = 1000; !this.stopping; wait = Math.min(wait * 2, 5000)) {
        const now = await free().catch(() => undefined);
        if (now === undefined || now >= full + DISK_FREED_BYTES || this.deps.now() - since >= MAX_DISK_WAIT_MS) return true;
        await this.sleep(wait, true);
      }
      return false;
    })().finally(() => {
      this.diskBack = undefined;
    });
    return this.diskBack;
  }

  /** A loop's writes got through: it fails no longer (logged as the last failing loop gets through). */
  private gotThrough(loop: number): void {
    const failingFrom = this.failingSince();
    if (failingFrom !== undefined && this.failing.delete(loop) && this.failing.size === 0) {
      this.deps.log.info({ event: 'ingest.worker_recovered', failing_ms: this.deps.now() - failingFrom }, 'the ingest worker got through again');
    }
  }

  /**
   * A loop got through a job or an empty queue: whatever paused ingestion is over (a pause ends here, not at the
   * claim: a full disk or an absent store can take a claim's small write and still fail the job's).
   */
  private resumed(loop: number): void {
    this.freeWhenFull = undefined;
    this.gotThrough(loop);
    for (const pause of PAUSES) {
      const since = this.pausedSince.get(pause.kind);
      if (since === undefined) continue;
      this.deps.log.info({ event: pause.ends[0], paused_ms: this.deps.now() - since }, pause.ends[1]);
      this.pausedSince.delete(pause.kind);
    }
  }

  /**
   * Runs a claimed job; a lease found lost on the way ends it with nothing recorded (another worker has it). An error
   * its run did not handle (outside the pipeline: the attachments, markReady, a refused write) is the job's transient
   * failure, an attempt like any other: one document's fault or an unlucky moment never ends the loop. What cannot
   * even be recorded goes up to supervise(), which backs off and hands the job back.
   */
  private async runJob(job: Job, loop: number): Promise<void> {
    const started = this.deps.now();
    try {
      try {
        await this.runLeased(job, started, loop);
      } catch (err) {
        if (err instanceof LeaseLost || waitedOut(err)) throw err;
        await this.handleFailure(job, job.documentId, err, started);
      }
    } catch (err) {
      if (!(err instanceof LeaseLost)) throw err;
      this.deps.log.warn(
        { event: 'ingest.lease_lost', job_id: job.id, document_id: job.documentId },
        'this worker lost the lease on a job (it was not renewed in time): left it to whoever claims it next',
      );
    }
  }

  private async runLeased(job: Job, started: number, loop: number): Promise<void> {
    const { documents, jobs, log } = this.deps;
    const doc = await documents.markProcessing(job.documentId);
    // The claim and this written: the database takes the worker's writes again, so whatever failed outside any job
    // is over, though this job may take minutes (a document handed back is indexed again from its start).
    this.gotThrough(loop);
    if (!doc) return; // deleted; its job row went with it
    if (job.attempts > this.opts.maxAttempts) {
      await this.fail(job, doc.id, `processing was interrupted ${job.attempts - 1} times — gave up`);
      return;
    }
    this.running.set(job.id, doc.id);
    // The lease runs `leaseMs` from the claim or the last renewal. A quarter of it is kept as a margin: past that,
    // another worker may soon claim the job, so this one stops before it could.
    let renewedAt = started;
    let taken = false;
    const leaseLost = () => taken || this.deps.now() - renewedAt > this.opts.leaseMs * 0.75;
    const heartbeat = setInterval(() => {
      const at = this.deps.now();
      jobs.heartbeat(job, this.opts.leaseMs).then(
        (ours) => (ours ? (renewedAt = at) : (taken = true)),
        (err: unknown) => log.warn({ err }, 'lease heartbeat failed'),
      );
    }, this.opts.heartbeatMs);
    try {
      let result: PipelineResult;
      let labelIds: string[] = [];
      try {
        // Progress is written at most once per `progressEveryMs`: a small document goes straight from processing
        // to ready, a big one still moves every second or so. (A deletion meanwhile is caught by markReady.)
        let lastProgress = this.deps.now();
        const progress = async (p: number): Promise<boolean> => {
          // Stopping: the run ends at its next slice and the document goes back to the queue (see below).
          if (this.stopping) throw new Error('the ingest worker is stopping');
          if (leaseLost()) throw new LeaseLost(job.id);
          const now = this.deps.now();
          if (now - lastProgress < this.opts.progressEveryMs) return true;
          lastProgress = now;
          return documents.setProgress(doc.id, p);
        };
        labelIds = (await this.deps.labels?.idsOf(doc.id)) ?? [];
        result = await runPipeline(this.pipeline, doc, { progress, mayHaveRows: job.attempts > 1 || job.released, labelIds });
      } catch (err) {
        if (err instanceof LeaseLost) throw err;
        if (this.stopping) {
          await documents.release(doc.id, job);
          this.announce(doc.id);
          log.info({ event: 'ingest.released', document_id: doc.id, job_id: job.id }, 'shutting down: document handed back to the queue');
          return;
        }
        // Not an attempt: supervise() requeues the job once it can write (and reach the database and the store) again.
        if (waitedOut(err)) throw err;
        await this.handleFailure(job, doc.id, err, started);
        return;
      }
      // Before the message is ready, so a run cut off in between makes them on its retry (which makes no duplicates).
      const notKept = result.attachments.length > 0 ? ((await this.deps.attachments?.acceptAttachments(doc, result.attachments)) ?? []) : [];
      const kept = await documents.markReady(doc.id, job, {
        chunkCount: result.chunkCount,
        pages: result.pages,
        warnings: [...result.warnings, ...notKept],
        embedderId: this.deps.pipeline.embedder.id,
        language: result.language,
        // What the uploader gave wins over what the file says.
        ...(result.metadata ? { metadata: { ...result.metadata, ...doc.metadata } } : {}),
      });
      if (!kept) {
        // Deleted while being written: take its chunks, and the attachments made meanwhile, back out.
        await this.deps.pipeline.chunks.deleteDocument(doc.id);
        if (result.attachments.length > 0) await this.deps.attachments?.removeAttachments(doc);
        return;
      }
      // The document is ready and its job done: a failure here is not the job's to retry, so it is logged instead.
      await this.relabel(doc.id, labelIds).catch((err: unknown) =>
        log.error({ event: 'ingest.labels_not_updated', document_id: doc.id, err }, "a document's labels changed while it was indexed and its chunks could not be given the new ones: change its labels again"),
      );
      log.info(
        {
          event: 'document.ingested',
          document_id: doc.id,
          user_id: doc.userId,
          project_id: doc.projectId,
          chunks: result.chunkCount,
          pages: result.pages,
          warnings: result.warnings.length,
          parse_ms: result.timings.parseMs,
          ocr_ms: result.timings.ocrMs,
          chunk_ms: result.timings.chunkMs,
          embed_ms: result.timings.embedMs,
          write_ms: result.timings.writeMs,
          attempts: job.attempts,
          ms: this.deps.now() - started,
        },
        'document ingested',
      );
      this.deps.outcomes?.ingested('ready', result.chunkCount);
      this.deps.onSettled?.(doc.id);
    } finally {
      clearInterval(heartbeat);
      this.running.delete(job.id);
    }
  }

  /** Labels changed while the chunks were written: the change's own update may have missed rows written after it. */
  private async relabel(documentId: string, labelIds: string[]): Promise<void> {
    const labelsNow = (await this.deps.labels?.idsOf(documentId)) ?? [];
    if ([...labelsNow].sort().join() !== [...labelIds].sort().join()) await this.deps.pipeline.chunks.setDocumentFields([documentId], { labels: labelsNow });
  }

  private async handleFailure(job: Job, documentId: string, err: unknown, started: number): Promise<void> {
    const { log } = this.deps;
    if (err instanceof DocumentGone) {
      await this.deps.pipeline.chunks.deleteDocument(documentId);
      return;
    }
    const base = { event: 'ingest.failed', document_id: documentId, user_id: job.userId, attempts: job.attempts, ms: this.deps.now() - started };
    let message: string;
    let transient: boolean;
    if (isParseError(err)) {
      message = err.message;
      transient = false;
    } else if (isModelError(err)) {
      message = `embedding failed: ${err.message}`;
      transient = err.transient;
    } else {
      // Unknown (a write that failed, a full disk): retrying may help, and attempts are bounded.
      message = `indexing failed: ${(err as Error)?.message ?? String(err)}`;
      transient = true;
    }
    if (transient && job.attempts < this.opts.maxAttempts) {
      const delay = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** (job.attempts - 1));
      const retryAt = this.deps.now() + delay;
      await this.deps.documents.requeue(documentId, job, message, retryAt);
      this.deps.outcomes?.retried();
      log.warn({ ...base, error: message, retry_at: new Date(retryAt).toISOString(), err }, 'ingest failed, will retry');
      return;
    }
    const final = transient ? `${message} (gave up after ${job.attempts} attempts)` : message;
    await this.fail(job, documentId, final, err);
  }

  private async fail(job: Job, documentId: string, message: string, err?: unknown): Promise<void> {
    await this.deps.pipeline.chunks.deleteDocument(documentId).catch(() => undefined);
    await this.deps.documents.markFailed(documentId, job, message);
    this.deps.log.warn(
      { event: 'ingest.failed', document_id: documentId, user_id: job.userId, attempts: job.attempts, error: message, err },
      'ingest failed',
    );
    this.deps.outcomes?.ingested('failed');
    this.deps.onSettled?.(documentId);
  }
}
