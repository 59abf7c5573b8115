import { access, constants, mkdir } from 'node:fs/promises';
import * as lancedb from '@lancedb/lancedb';

const MiB = 1024 * 1024;

export interface CacheSizes {
  /** Decoded index data (HNSW graph and codes, BM25 postings, scalar indexes). */
  indexBytes: number;
  /** Manifests and file metadata. */
  metadataBytes: number;
}

/**
 * LanceDB's caches default to 6 GB (indexes) and 1 GB (metadata), and every optimize re-keys them (new
 * index ids, new versions) while the superseded entries stay until the cap is reached: under a steady
 * mixed load the cache grew ~18x past what a fresh open of the same data holds, one cause of the RSS
 * climb in issue #12. Capped here at a size that still holds the live indexes of ~100k chunks.
 */
export const DEFAULT_CACHE: CacheSizes = { indexBytes: 256 * MiB, metadataBytes: 64 * MiB };

/**
 * The daemon's LanceDB connection. Only the daemon opens it (a single writer), and only this
 * folder imports @lancedb/lancedb.
 */
export class VectorStore {
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly connection: lancedb.Connection,
  ) {}

  static async open(dir: string, cache: CacheSizes = DEFAULT_CACHE): Promise<VectorStore> {
    await mkdir(dir, { recursive: true });
    const session = new lancedb.Session(BigInt(cache.indexBytes), BigInt(cache.metadataBytes));
    return new VectorStore(dir, await lancedb.connect(dir, { session }));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Up when the directory is still there and writable and the connection answers. */
  async probe(): Promise<{ up: boolean; error?: string }> {
    if (this.closed) return { up: false, error: 'closed' };
    try {
      await access(this.dir, constants.W_OK);
      await this.connection.tableNames();
      return { up: true };
    } catch (err) {
      return { up: false, error: (err as Error).message };
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connection.close();
  }
}
