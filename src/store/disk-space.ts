/**
 * Free space in the data directory, and a small space reserve kept there. SQLite must create its WAL index
 * (`-shm`, 32 KiB written page by page) to open the database after a clean stop, so on a disk that filled up
 * meanwhile the daemon could not even start. The reserve file is made when there is room and deleted at
 * start when the disk is full: the daemon opens, reports `storage: down`, and recovers once space returns.
 */
import { open, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

const MiB = 1024 * 1024;

/** Below this much free space the storage health check reports down (writes are about to fail). */
export const LOW_SPACE_BYTES = 16 * MiB;
const RESERVE_BYTES = 8 * MiB;

export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

export class SpaceReserve {
  readonly path: string;
  private filling: Promise<void> | undefined;

  constructor(private readonly dataDir: string) {
    this.path = join(dataDir, 'space-reserve');
  }

  /** At start: gives the reserve back when the disk is full, so the stores can open. True when it did. */
  async releaseIfFull(): Promise<boolean> {
    if ((await freeBytes(this.dataDir)) >= LOW_SPACE_BYTES || !(await this.exists())) return false;
    await rm(this.path, { force: true });
    return true;
  }

  /** Makes the reserve again when there is room for it and to spare (one at a time; failures leave none). */
  replenish(): Promise<void> {
    this.filling ??= this.fill().finally(() => (this.filling = undefined));
    return this.filling;
  }

  private async fill(): Promise<void> {
    if ((await this.exists()) || (await freeBytes(this.dataDir)) < RESERVE_BYTES + LOW_SPACE_BYTES) return;
    const tmp = `${this.path}.part`;
    try {
      const fh = await open(tmp, 'w', 0o600);
      try {
        // Written, not truncated: a sparse file would hold no blocks to give back.
        const block = Buffer.alloc(MiB);
        for (let done = 0; done < RESERVE_BYTES; done += MiB) await fh.write(block, 0, MiB, done);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.path);
    } catch {
      await rm(tmp, { force: true });
    }
  }

  private async exists(): Promise<boolean> {
    return stat(this.path).then(
      () => true,
      () => false,
    );
  }
}
