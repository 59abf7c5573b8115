/**
 * Content-addressed store of uploaded originals: `<root>/<sha[0:2]>/<sha>`. Documents with the same bytes share
 * one file; a file goes when no document references it. Uploads land in `<root>/tmp/` first and are renamed
 * into place (atomic on one file system), so a crash never leaves a half-written original under its hash.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

const SHA = /^[0-9a-f]{64}$/;

export class FileStore {
  readonly tmpDir: string;
  /** Per-hash critical sections: placing and releasing the same hash never interleave. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(readonly root: string) {
    this.tmpDir = join(root, 'tmp');
  }

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
  }

  pathOf(sha256: string): string {
    if (!SHA.test(sha256)) throw new TypeError(`"sha256" must be 64 lowercase hex characters`);
    return join(this.root, sha256.slice(0, 2), sha256);
  }

  /** A fresh temp path and its write stream, for an upload being received. */
  tempFile(): { path: string; stream: WriteStream } {
    const path = join(this.tmpDir, `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.part`);
    return { path, stream: createWriteStream(path, { mode: 0o600 }) };
  }

  /** Runs `fn` while holding the hash's lock. */
  async withLock<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(sha256) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(sha256, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(sha256) === tail) this.locks.delete(sha256);
    }
  }

  /** Moves a received temp file to its content address (dropping it when those bytes are already stored). Call under withLock. */
  async place(tempPath: string, sha256: string): Promise<void> {
    const dest = this.pathOf(sha256);
    if (await exists(dest)) {
      await rm(tempPath, { force: true });
      return;
    }
    await mkdir(join(this.root, sha256.slice(0, 2)), { recursive: true, mode: 0o700 });
    await rename(tempPath, dest);
  }

  read(sha256: string): Promise<Buffer> {
    return readFile(this.pathOf(sha256));
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.pathOf(sha256));
  }

  /** Removes a stored original. Call under withLock, after checking no document references it. */
  async remove(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }

  /**
   * Startup sweep: temp files of interrupted uploads and originals no document references (a crash between
   * the rename and the database insert) are deleted. Returns what was removed.
   */
  async sweep(referenced: Set<string>): Promise<{ temp: number; orphans: number }> {
    let temp = 0;
    let orphans = 0;
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      await rm(join(this.tmpDir, name), { force: true, recursive: true });
      temp++;
    }
    for (const prefix of await readdir(this.root).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      for (const name of await readdir(join(this.root, prefix))) {
        if (SHA.test(name) && !referenced.has(name)) {
          await rm(join(this.root, prefix, name), { force: true });
          orphans++;
        }
      }
    }
    return { temp, orphans };
  }

  /** Every stored hash (tests and the sweep's callers). */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const prefix of await readdir(this.root).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      for (const name of await readdir(join(this.root, prefix))) if (SHA.test(name)) out.push(name);
    }
    return out;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
