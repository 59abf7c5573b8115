/**
 * Objects as files under a directory: the key is the relative path. Files are written aside and renamed into
 * place (atomic on one file system), so a crash never leaves a half-written object under its key.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, chmod, constants, copyFile, link, lstat, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange, ObjectInfo, ObjectStore } from './object-store.js';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** An object that is not a regular file, in a store that takes only those (`regularFilesOnly`). */
export class NotRegularFile extends Error {
  override name = 'NotRegularFile';
}

const notRegular = (location: string, key: string, what: string) => new NotRegularFile(`${join(location, key)} is ${what} where a regular file belongs: refused`);

export interface LocalObjectStoreOptions {
  /**
   * Objects are regular files only: a symlink, device or FIFO under a key is refused (an Error) rather than followed
   * or read. For directories others may write, such as a backup repository: a link to /dev/zero would never end,
   * and a FIFO would block the reader.
   */
  regularFilesOnly?: boolean;
}

export class LocalObjectStore implements ObjectStore {
  readonly engine = 'local';

  constructor(
    readonly location: string,
    private readonly opts: LocalObjectStoreOptions = {},
  ) {}

  private pathOf(key: string): string {
    if (key === '' || key.startsWith('/') || key.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new TypeError(`invalid object key "${key}"`);
    return join(this.location, ...key.split('/'));
  }

  /** A hard link never replaces an existing name, so two racing writers cannot both store (the first wins). */
  async putFileIfAbsent(key: string, path: string): Promise<'stored' | 'exists'> {
    const dest = this.pathOf(key);
    try {
      if (await this.head(key)) return 'exists';
      await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
      try {
        await link(path, dest);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return 'exists';
        // The file lies on another file system (a temp folder elsewhere than the data directory): a copy beside the
        // destination first, linked from there, so the first writer still wins.
        if (code === 'EXDEV') return await this.linkCopy(path, dest);
        // File systems without hard links: a rename, which callers serialise per key (DocumentService's lock).
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
        await rename(path, dest);
      }
      return 'stored';
    } finally {
      await rm(path, { force: true });
    }
  }

  private async linkCopy(path: string, dest: string): Promise<'stored' | 'exists'> {
    const aside = `${dest}.${randomBytes(6).toString('hex')}.part`;
    try {
      await copyFile(path, aside, fsConstants.COPYFILE_EXCL);
      await chmod(aside, (await stat(path)).mode & 0o777);
      await link(aside, dest);
      return 'stored';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
      throw err;
    } finally {
      await rm(aside, { force: true });
    }
  }

  async put(key: string, body: string | Buffer): Promise<void> {
    const dest = this.pathOf(key);
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    const tmp = `${dest}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, body, { mode: 0o600 });
    await rename(tmp, dest);
  }

  async get(key: string): Promise<Buffer | null> {
    const handle = await this.openFile(key);
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  async open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | null> {
    const handle = await this.openFile(key);
    if (!handle) return null;
    // Size and bytes from one open file: a removal meanwhile cannot make them disagree.
    try {
      const { size } = await handle.stat();
      return { body: handle.createReadStream(range), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** The file under `key` opened for reading, or null when there is none; see `regularFilesOnly`. */
  private async openFile(key: string) {
    const strict = this.opts.regularFilesOnly === true;
    let handle;
    try {
      // O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused below); no effect on regular files.
      handle = await open(this.pathOf(key), strict ? fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK : 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      if (strict && (err as NodeJS.ErrnoException).code === 'ELOOP') throw notRegular(this.location, key, 'a symbolic link');
      throw err;
    }
    if (strict) {
      const st = await handle.stat().catch(async (err: unknown) => {
        await handle.close();
        throw err;
      });
      if (!st.isFile()) {
        await handle.close();
        throw notRegular(this.location, key, st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'a directory or special file');
      }
    }
    return handle;
  }

  async head(key: string): Promise<ObjectInfo | null> {
    try {
      const st = await (this.opts.regularFilesOnly ? lstat : stat)(this.pathOf(key));
      return st.isFile() ? { size: st.size, modified: st.mtime } : null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *list(prefix = ''): AsyncIterable<string> {
    const walk = async function* (dir: string, rel: string): AsyncIterable<string> {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return;
        throw err;
      }
      for (const e of entries) {
        const key = rel ? `${rel}/${e.name}` : e.name;
        // Only directories on the prefix's path are entered.
        if (!key.startsWith(prefix) && !prefix.startsWith(`${key}/`)) continue;
        if (e.isDirectory()) yield* walk(join(dir, e.name), key);
        else if (e.isFile() && key.startsWith(prefix)) yield key;
      }
    };
    yield* walk(this.location, '');
  }

  async probe(): Promise<{ up: boolean; error?: string }> {
    try {
      await access(this.location, constants.W_OK);
      return { up: true };
    } catch (err) {
      return { up: false, error: (err as Error).message };
    }
  }
}
