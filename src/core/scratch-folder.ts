/**
 * A command's scratch folder in the system's temp folder, `docsearch-<kind>-<pid>-…`: a process killed midway
 * cannot remove its own (a backup's holds a database snapshot), so the next one of its kind removes those whose
 * process is gone. A live process, or a reused pid, keeps its folder.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes this process's folder; `abandoned` is how many dead processes' folders of the kind were removed first. */
export async function scratchFolder(kind: string): Promise<{ path: string; abandoned: number }> {
  const pattern = new RegExp(`^docsearch-${kind}-(\\d+)-`);
  let abandoned = 0;
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true });
    abandoned++;
  }
  return { path: await mkdtemp(join(tmpdir(), `docsearch-${kind}-${process.pid}-`)), abandoned };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
  // A process killed but not yet reaped by its parent still answers kill(0): on Linux its state says so.
  return !/^\d+ \(.*\) Z/s.test(readProcStat(pid));
}

function readProcStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}
