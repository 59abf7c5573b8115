import { closeSync, openSync, statfsSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Appends zeros to `file` until its file system refuses, leaving about `leaveBytes` free (in 4 KiB steps): a full
 * disk for the disk-full test and the soak, on a tmpfs they mounted.
 */
export function fillDisk(file: string, leaveBytes = 0): void {
  const fd = openSync(file, 'a');
  try {
    for (const size of [1 << 20, 4096]) {
      const block = Buffer.alloc(size);
      for (;;) {
        const s = statfsSync(dirname(file));
        if (s.bavail * s.bsize - size < leaveBytes) break;
        try {
          writeSync(fd, block);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
