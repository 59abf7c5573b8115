/**
 * Originals this replica received lately, kept on its own disk beside the object store (shared mode). The replica
 * that accepts an upload usually also claims its job (its claims prefer the jobs of its own uploads, see
 * JobStoreOptions.origin), and reading the original back from S3 cost a GET: AWS SDK work in the replica and a
 * round trip per document, a visible share of shared mode's CPU (bench/results/scale.md). A kept copy is a hard link to the received temp file (no copy; the upload's bytes were hashed
 * as they arrived), checked against its hash when read, and goes after `maxAgeMs` or when the copies pass
 * `maxBytes`, oldest first. It is only a shortcut: a copy that is gone, or wrong, means a read from the store.
 */
import { createHash } from 'node:crypto';
import { link, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface RecentOriginalsOptions {
  dir: string;
  /** Default 256 MiB. */
  maxBytes?: number;
  /** Default 10 minutes: long enough for a queued job to be claimed and read. */
  maxAgeMs?: number;
  now?: () => number;
}

export class RecentOriginals {
  /** sha256 → size and when it was kept, oldest first (Map keeps insertion order). */
  private readonly kept = new Map<string, { size: number; at: number }>();
  private bytes = 0;
  private started: Promise<void> | undefined;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RecentOriginalsOptions) {
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    this.maxAgeMs = opts.maxAgeMs ?? 10 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Starts empty, once: what an earlier run kept is unknown to this one. Later calls (FileStore.init runs before
   * each upload, to bring back a removed temp folder) only bring the folder back.
   */
  async init(): Promise<void> {
    this.started ??= rm(this.opts.dir, { recursive: true, force: true });
    await this.started;
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
  }

  /** Keeps the received file at `path` (a hard link) as the original `sha256`; false when it could not. */
  async keep(path: string, sha256: string): Promise<boolean> {
    if (this.kept.has(sha256)) return true;
    let size: number;
    try {
      size = (await stat(path)).size;
      if (size > this.maxBytes) return false;
      await link(path, this.pathOf(sha256));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      size = (await stat(this.pathOf(sha256)).catch(() => ({ size: 0 }))).size;
    }
    this.kept.set(sha256, { size, at: this.now() });
    this.bytes += size;
    await this.evict();
    return true;
  }

  /** The kept bytes of `sha256`, or undefined when there is no good copy. */
  async read(sha256: string): Promise<Buffer | undefined> {
    if (!this.kept.has(sha256)) return undefined;
    const bytes = await readFile(this.pathOf(sha256)).catch(() => undefined);
    if (bytes && createHash('sha256').update(bytes).digest('hex') === sha256) return bytes;
    await this.drop(sha256);
    return undefined;
  }

  async drop(sha256: string): Promise<void> {
    const entry = this.kept.get(sha256);
    if (!entry) return;
    this.kept.delete(sha256);
    this.bytes -= entry.size;
    await rm(this.pathOf(sha256), { force: true });
  }

  private async evict(): Promise<void> {
    const oldest = this.now() - this.maxAgeMs;
    for (const [sha, entry] of this.kept) {
      if (this.bytes <= this.maxBytes && entry.at >= oldest) break;
      await this.drop(sha);
    }
  }

  private pathOf(sha256: string): string {
    return join(this.opts.dir, sha256);
  }
}
