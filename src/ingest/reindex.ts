/**
 * Re-index: when the configured embedder is not the one the stored vectors came from, every chunk is
 * re-embedded from its stored `search_text` into a fresh table (ChunkIndex.rebuild) — the originals are not
 * parsed again. Ingestion waits meanwhile, and search answers 409 until the switch (reindexRequired()).
 * One re-index at a time per library: replicas sharing one (shared mode) take a lease first, so two of them
 * asked at once do not build two tables and drop each other's source.
 */

/** The lease a re-index holds, across every process sharing the library. */
export const REINDEX_LEASE = 'reindex';
import type { Clock } from '../core/clock.js';
import type { Embedder } from '../models/embedder.js';
import type { Logger } from '../core/logger.js';
import type { Locks } from '../store/coordination.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentStore } from '../store/sql/documents.js';
import { embedWithUnits } from './unit-vectors.js';

export interface ReindexStatus {
  required: boolean;
  running: boolean;
  /** Embedder the stored vectors come from (null: nothing indexed yet). */
  from: string | null;
  /** The configured embedder. */
  to: string;
  done: number;
  total: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
}

export class Reindexer {
  private state: Omit<ReindexStatus, 'required' | 'from' | 'to'> = {
    running: false,
    done: 0,
    total: 0,
    started_at: null,
    finished_at: null,
    error: null,
  };
  private current: Promise<void> | undefined;
  private stopping = false;
  /** The last start was refused because another replica held the lease: moot once the index has switched. */
  private refused = false;

  constructor(
    private readonly deps: {
      chunks: ChunkIndex;
      embedder: Embedder;
      documents: DocumentStore;
      locks: Locks;
      log: Logger;
      now: Clock;
      /** Told once the index has switched to the re-embedded table (the backfill looks at its rows). */
      onSwitched?: () => void;
    },
  ) {}

  /** True while ingestion and search must wait. */
  get blocking(): boolean {
    return this.state.running || this.deps.chunks.reindexRequired();
  }

  status(): ReindexStatus {
    const required = this.deps.chunks.reindexRequired();
    return {
      required,
      from: this.deps.chunks.indexInfo()?.embedderId ?? null,
      to: this.deps.embedder.id,
      ...this.state,
      ...(this.refused && !required ? { error: null } : {}),
    };
  }

  /** Starts a re-index in the background when one is needed and none runs; returns the status right after. */
  start(): ReindexStatus {
    if (!this.state.running && this.deps.chunks.reindexRequired()) {
      this.current = this.run().catch(() => undefined);
    }
    return this.status();
  }

  /** Shutdown: a running re-index ends at its next batch (the old index stays in use) and this waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current;
  }

  /** Runs a re-index to completion (the CLI's direct mode awaits this). `onProgress` sees (done, total). */
  async run(onProgress?: (done: number, total: number) => void): Promise<void> {
    if (this.state.running) return this.current;
    const { chunks, embedder, documents, locks, log, now } = this.deps;
    const from = chunks.indexInfo()?.embedderId ?? null;
    this.state = { running: true, done: 0, total: 0, started_at: now(), finished_at: null, error: null };
    this.refused = false;
    let lease;
    try {
      lease = await locks.tryAcquire(REINDEX_LEASE);
      if (!lease) {
        this.refused = true;
        throw new Error('another replica is re-indexing this library: its GET /api/v1/reindex shows the progress, and this one follows when it switches');
      }
    } catch (err) {
      this.state = { ...this.state, running: false, finished_at: now(), error: (err as Error).message };
      log.warn({ event: 'reindex.refused', from, to: embedder.id, err }, 're-index not started');
      throw err;
    }
    log.info({ event: 'reindex.started', from, to: embedder.id }, 're-index started');
    try {
      await embedder.init();
      const result = await chunks.rebuild(
        {
          id: embedder.id,
          dimension: embedder.dimension,
          embed: (rows) =>
            this.stopping
              ? Promise.reject(new Error('the daemon is shutting down'))
              : embedWithUnits(
                  embedder,
                  rows.map((r) => ({ text: r.text, embedText: r.search_text })),
                  { kind: 'passage' },
                ),
        },
        (done, total) => {
          this.state.done = done;
          this.state.total = total;
          onProgress?.(done, total);
        },
      );
      await documents.setEmbedderForAll(embedder.id);
      this.deps.onSwitched?.();
      log.info({ event: 'reindex.finished', from, to: embedder.id, chunks: result.chunks, ms: now() - this.state.started_at! }, 're-index finished');
    } catch (err) {
      this.state.error = (err as Error).message;
      if (this.stopping) log.info({ event: 'reindex.interrupted', from, to: embedder.id }, 're-index interrupted by shutdown');
      else log.error({ event: 'reindex.failed', from, to: embedder.id, err }, 're-index failed');
      throw err;
    } finally {
      this.state.running = false;
      this.state.finished_at = now();
      await lease.release().catch(() => undefined);
    }
  }
}
