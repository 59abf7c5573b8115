import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statfsSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { unmet } from './requirement.js';

/** Mounts a tmpfs of `mb` MiB on `dir`: null when done, else why not (the caller skips, saying so). */
export function mountTmpfs(dir: string, mb: number): string | null {
  if (process.getuid?.() !== 0) return unmet('needs root to mount a small tmpfs');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}M,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return unmet(`cannot mount a tmpfs here: ${(err as Error).message.split('\n')[0]}`);
  }
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
}

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
