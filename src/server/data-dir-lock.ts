import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { isDiskFull } from '../core/disk-full.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One daemon per data directory: LanceDB must have a single writer. A lock left by a killed
 * daemon (kill -9) is taken over when its pid is gone.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'daemon.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, String(process.pid));
      } catch (err) {
        // A full disk must not keep the daemon from starting (it reports degraded and recovers): the
        // file's existence is the lock; an empty one reads as stale to a later start, like a killed daemon's.
        if (!isDiskFull(err)) throw err;
      } finally {
        closeSync(fd);
      }
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new Error(`another docsearch daemon (pid ${pid}) is using ${dataDir}; stop it or pick another --data-dir`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}
