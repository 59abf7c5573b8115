/**
 * A replica's disk cache of the index's immutable files on object storage. A Lance table's data, index, deletion
 * and transaction files are named once (by UUID or version) and never rewritten: only which of them the current
 * version lists changes, and that is in the manifests, which are not cached. So a block read once from the store
 * can be served from disk for as long as the file exists, by every later search on this replica.
 *
 * Files are cached in blocks (a search reads a few kilobytes here and there of files that grow to gigabytes), one
 * directory per object: `meta.json` (size, ETag, Last-Modified, as the store answered) and one file per block,
 * each written to a temporary name and renamed, so a block file that exists is whole. Least recently used objects
 * are removed past the size limit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';

export const BLOCK_BYTES = 1024 * 1024;

/** Blocks kept in memory as well: the data a search touches in a library of ~100k chunks. */
const DEFAULT_MEMORY_BYTES = 64 * BLOCK_BYTES;

export interface ObjectMeta {
  size: number;
  etag: string;
  lastModified: string;
}

interface Entry {
  bytes: number;
}

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

export class IndexFileCache {
  /** Objects in least-recently-used order (a Map keeps insertion order; a use moves the entry to the end). */
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private readonly metas = new Map<string, ObjectMeta>();
  /** Blocks also held in memory (`<id>/<n>`), least recently used dropped past `memoryBytes`. */
  private readonly hot: LRUCache<string, Buffer>;

  private constructor(
    readonly dir: string,
    readonly maxBytes: number,
    readonly memoryBytes: number,
  ) {
    // A size of 1 holds no block: lru-cache wants a positive bound, and a block over it is not kept.
    this.hot = new LRUCache({ maxSize: Math.max(1, memoryBytes), sizeCalculation: (b) => Math.max(1, b.length) });
  }

  /** Opens the cache at `dir`, counting what an earlier run left (most recently written last). */
  static async open(dir: string, maxBytes: number, memoryBytes = Math.min(DEFAULT_MEMORY_BYTES, maxBytes)): Promise<IndexFileCache> {
    await mkdir(dir, { recursive: true });
    const cache = new IndexFileCache(dir, maxBytes, memoryBytes);
    const found: { name: string; bytes: number; mtime: number }[] = [];
    for (const name of await readdir(dir)) {
      const objectDir = join(dir, name);
      let bytes = 0;
      let mtime = 0;
      try {
        for (const file of await readdir(objectDir)) {
          if (file.endsWith('.tmp')) {
            await rm(join(objectDir, file), { force: true });
            continue;
          }
          const s = await stat(join(objectDir, file));
          bytes += s.size;
          mtime = Math.max(mtime, s.mtimeMs);
        }
      } catch {
        await rm(objectDir, { recursive: true, force: true });
        continue;
      }
      found.push({ name, bytes, mtime });
    }
    found.sort((a, b) => a.mtime - b.mtime);
    for (const f of found) cache.account(f.name, f.bytes);
    await cache.evict();
    return cache;
  }

  /** Bytes held on disk. */
  get size(): number {
    return this.total;
  }

  private static id(key: string): string {
    return createHash('sha256').update(key).digest('hex').slice(0, 40);
  }

  private account(id: string, bytes: number): void {
    const e = this.entries.get(id) ?? { bytes: 0 };
    this.entries.delete(id);
    e.bytes += bytes;
    this.total += bytes;
    this.entries.set(id, e);
  }

  private touch(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.entries.set(id, e);
  }

  private async evict(): Promise<void> {
    for (const [id, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(id);
      this.forgetHot(id);
      this.total -= e.bytes;
      await rm(join(this.dir, id), { recursive: true, force: true });
    }
  }

  private forgetHot(id: string): void {
    this.metas.delete(id);
    for (const name of [...this.hot.keys()].filter((n) => n.startsWith(`${id}/`))) this.hot.delete(name);
  }

  private async writeAtomic(id: string, file: string, data: Buffer | string): Promise<void> {
    const objectDir = join(this.dir, id);
    await mkdir(objectDir, { recursive: true });
    const tmp = join(objectDir, `${file}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, data);
      await rename(tmp, join(objectDir, file));
    } catch (err) {
      // A full disk leaves no partial file behind; the caller answers from memory.
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async meta(key: string): Promise<ObjectMeta | undefined> {
    const id = IndexFileCache.id(key);
    const known = this.metas.get(id);
    if (known) return known;
    try {
      const meta = JSON.parse(await readFile(join(this.dir, id, 'meta.json'), 'utf8')) as ObjectMeta;
      this.metas.set(id, meta);
      return meta;
    } catch (err) {
      if (isMissing(err) || err instanceof SyntaxError) return undefined;
      throw err;
    }
  }

  async putMeta(key: string, meta: ObjectMeta): Promise<void> {
    const id = IndexFileCache.id(key);
    const text = JSON.stringify(meta);
    await this.writeAtomic(id, 'meta.json', text);
    this.metas.set(id, meta);
    this.account(id, text.length);
    await this.evict();
  }

  /**
   * Bytes `from..to` (exclusive) of block `n` of the object, or undefined when the block is not here (never
   * cached, or evicted meanwhile). The most recently used blocks are also kept in memory: a search reads a few
   * kilobytes each from dozens of blocks, and a read from memory costs no system call.
   */
  async read(key: string, n: number, blockBytes: number, from: number, to: number): Promise<Buffer | undefined> {
    const id = IndexFileCache.id(key);
    const name = `${id}/${n}`;
    let block = this.hot.get(name);
    if (!block) {
      try {
        block = await readFile(join(this.dir, id, String(n)));
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
      if (block.length !== blockBytes) return undefined;
      this.hot.set(name, block);
    }
    this.touch(id);
    return block.subarray(from, to);
  }

  async putBlock(key: string, n: number, data: Buffer): Promise<void> {
    const id = IndexFileCache.id(key);
    this.hot.set(`${id}/${n}`, data);
    await this.writeAtomic(id, String(n), data);
    this.account(id, data.length);
    await this.evict();
  }

  /** Forgets an object (the store answered with another ETag: it is not what was cached). */
  async drop(key: string): Promise<void> {
    const id = IndexFileCache.id(key);
    const e = this.entries.get(id);
    this.entries.delete(id);
    this.forgetHot(id);
    if (e) this.total -= e.bytes;
    await rm(join(this.dir, id), { recursive: true, force: true });
  }
}
