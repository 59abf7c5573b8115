/**
 * A process's resident memory while a hostile server works on it: sampled every 50 ms from /proc (VmRSS), so a peak
 * that comes and goes between two requests is seen too. In MiB.
 */
import { readFileSync } from 'node:fs';

/** A process's memory from /proc in MiB, rounded: resident now (VmRSS) or its peak so far (VmHWM). */
export const memoryMiB = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

export const rssMiB = (pid: number): number => memoryMiB(pid, 'VmRSS');

export function rssSampler(pid: number): { stop(): { before: number; peak: number } } {
  const before = rssMiB(pid);
  let peak = before;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // the process ended: its peak so far stands
    }
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return { before, peak };
    },
  };
}
