/**
 * A process's resident memory while a hostile server works on it: sampled every 50 ms from /proc (VmRSS), so a peak
 * that comes and goes between two requests is seen too. In MiB.
 */
import { readFileSync } from 'node:fs';

export const rssMiB = (pid: number): number => Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

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
