import { readFileSync } from 'node:fs';

/**
 * CPU time, not wall-clock time: on the shared 2-core CI a wall-clock bound measures the other jobs as much as the
 * code under test; the CPU a process (or one of its threads) spent does not grow because others run.
 */

/** Linux's USER_HZ: /proc's utime and stime are in ticks of 1/100 s on every architecture Node runs on. */
const TICK_MS = 10;

/**
 * CPU milliseconds (user + system) of process `pid` so far, or of its thread `tid` (`/proc/<pid>/task/<tid>`; the
 * main thread's tid is the pid). Resolution: 10 ms.
 */
export function cpuMsOf(pid: number | 'self', tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
