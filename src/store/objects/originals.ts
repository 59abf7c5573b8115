/**
 * Content-addressed store of uploaded originals: key `<sha[0:2]>/<sha>` in an object store (`<data-dir>/files` in
 * embedded mode, the bucket in shared mode). Documents with the same bytes share one object; it goes when no
 * document references it. Uploads are received into a local temp folder first, hashed, then placed, so a crash
 * never leaves a half-written original under its hash.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange, ObjectInfo, ObjectStore } from './object-store.js';
import type { RecentOriginals } from './recent-originals.js';

const SHA = /^[0-9a-f]{64}$/;
const KEY = /^([0-9a-f]{2})\/([0-9a-f]{64})$/;

function keyOf(sha256: string): string {
  if (!SHA.test(sha256)) throw new TypeError(`"sha256" must be 64 lowercase hex characters`);
  return `${sha256.slice(0, 2)}/${sha256}`;
}

/** The store answered, and holds no intact original of that hash (none, or DamagedOriginal): reading again will not help. */
export class MissingOriginal extends Error {
  override name = 'MissingOriginal';
}

/** The store holds bytes under the hash, but not the ones hashed: the original was damaged since it was placed. */
export class DamagedOriginal extends MissingOriginal {
  override name = 'DamagedOriginal';
}

export class FileStore {
  /**
   * @param objects where originals are kept
   * @param tmpDir local folder for uploads being received (embedded mode: `<root>/tmp`, on the same file system as
   *   the originals, so placing one is a rename)
   * @param recent shared mode: local copies of what this replica received, read instead of the store's
   */
  constructor(
    readonly objects: ObjectStore,
    readonly tmpDir: string,
    private readonly recent?: RecentOriginals,
  ) {}

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await this.recent?.init();
  }

  /** A fresh temp path and its write stream, for an upload being received. */
  tempFile(): { path: string; stream: WriteStream } {
    const path = join(this.tmpDir, `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.part`);
    return { path, stream: createWriteStream(path, { mode: 0o600 }) };
  }

  /** A fresh temp file holding `bytes` (through tempFile's stream: a second writer to the path would race its open). */
  async tempFileOf(bytes: Uint8Array): Promise<string> {
    const { path, stream } = this.tempFile();
    await new Promise<void>((resolve, reject) => {
      stream.once('error', reject);
      // end's callback gets the write's error, if any, as well as 'error' does.
      stream.end(bytes, (err?: Error | null) => (err ? reject(err) : resolve()));
    });
    return path;
  }

  /** Stores a received temp file under its hash (dropping it when those bytes are already stored). Call under the hash's lock (DocumentService). */
  async place(tempPath: string, sha256: string): Promise<void> {
    // Linked before the store consumes the temp file.
    const kept = await this.recent?.keep(tempPath, sha256);
    try {
      await this.objects.putFileIfAbsent(keyOf(sha256), tempPath);
    } catch (err) {
      if (kept) await this.recent?.drop(sha256);
      throw err;
    }
  }

  /**
   * The whole original, checked against its hash; MissingOriginal when it is not stored, DamagedOriginal when its
   * bytes are not those hashed (any other error: the store failed, try again). Read whole, hashing it costs little
   * beside what the reader does with it, and bytes changed under their name (a disk, a store, a writer that cut them
   * short) would otherwise be indexed or shown as if they were the file.
   */
  async read(sha256: string): Promise<Buffer> {
    const local = await this.recent?.read(sha256);
    const bytes = local ?? (await this.objects.get(keyOf(sha256)));
    if (!bytes) throw new MissingOriginal(`original ${sha256} is not in ${this.objects.location}`);
    if (createHash('sha256').update(bytes).digest('hex') !== sha256) throw new DamagedOriginal(`original ${sha256} in ${this.objects.location} does not match its hash`);
    return bytes;
  }

  /** The original, or `range` of it, as a stream with the original's whole size; null when it is not stored. */
  open(sha256: string, range?: ByteRange): Promise<{ body: Readable; size: number } | null> {
    return this.objects.open(keyOf(sha256), range);
  }

  /** The stored original's size; null when it is not stored. */
  stat(sha256: string): Promise<ObjectInfo | null> {
    return this.objects.head(keyOf(sha256));
  }

  /** Removes a stored original. Call under the hash's lock (DocumentService), after checking no document references it. */
  async remove(sha256: string): Promise<void> {
    await this.recent?.drop(sha256);
    await this.objects.delete(keyOf(sha256));
  }

  /** Deletes the temp files of interrupted uploads (this process's own folder: nothing else writes there). */
  async sweepTemp(): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      await rm(join(this.tmpDir, name), { force: true, recursive: true });
      removed++;
    }
    return removed;
  }

  /**
   * Stored originals not in `referenced` and last written before `before` (ms since the epoch): candidates for
   * removal, to be re-checked under each hash's lock.
   */
  async unreferenced(referenced: Set<string>, before = Infinity): Promise<string[]> {
    const out: string[] = [];
    for await (const key of this.objects.list()) {
      const m = KEY.exec(key);
      if (!m || !m[2]!.startsWith(m[1]!) || referenced.has(m[2]!)) continue;
      if (before !== Infinity) {
        const info = await this.objects.head(key);
        if (!info || info.modified.getTime() >= before) continue;
      }
      out.push(m[2]!);
    }
    return out;
  }
}
