/**
 * A worker thread's processor time, read from Linux's /proc, so a time limit counts the work a thread does and not
 * the time it waits for a core on a busy machine (the parse and OCR threads run at a lower priority than searches).
 * Elsewhere there is no per-thread figure: callers count wall time instead.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/** /proc counts a thread's processor time in USER_HZ ticks, 100 a second on every Linux architecture. */
const TICK_MS = 10;

/** The calling thread's id (Linux), which a worker posts to its owner; undefined without /proc/thread-self. */
export function ownThreadId(): number | undefined {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
}

/** A thread of this process's processor time in ms (user and system), or undefined where /proc does not tell it. */
export function threadCpuMs(thread: number | undefined): number | undefined {
  if (thread === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${thread}/stat`, 'latin1');
    // Fields after the command name, which may hold spaces: state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}
