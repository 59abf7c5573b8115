/**
 * Who may use a library at once, beyond one request's locks. In shared mode every replica holds the library's lock
 * shared for as long as it runs; `docsearch migrate` takes it exclusively on the library it copies from and on the
 * one it copies into. So a migration starts only when no replica runs, and no replica starts while one copies:
 * the copy reads a library nobody changes, and nobody serves a half-copied one. (Embedded mode has the data-dir
 * lock for this: one process per data directory.)
 */
import type { Lease, Locks } from './coordination.js';

export const LIBRARY_LOCK = 'library';

/** How often a replica whose hold was lost (its connection dropped) takes it again. */
const RETAKE_MS = 10_000;

export class LibraryBusyError extends Error {
  override name = 'LibraryBusyError';
}

export interface LibraryHold {
  release(): Promise<void>;
}

/**
 * A replica's shared hold on its library, for as long as it runs; refused (LibraryBusyError) while a migration
 * holds the library. The hold lives on a connection: when that drops, it is taken again every few seconds.
 */
export async function holdLibrary(locks: Locks, log?: { warn(obj: object, msg: string): void }, retakeMs = RETAKE_MS): Promise<LibraryHold> {
  let lease: Lease | null = await locks.tryAcquire(LIBRARY_LOCK, 'shared');
  if (!lease) {
    throw new LibraryBusyError('`docsearch migrate` is copying this library (it holds the database\'s library lock); start the replicas again once it has finished');
  }
  let stopped = false;
  let warned = false;
  const retake = async () => {
    if (stopped || lease?.held()) return;
    lease = await locks.tryAcquire(LIBRARY_LOCK, 'shared').catch(() => null);
    if (lease && stopped) await lease.release();
    // Once per loss, not every few seconds while PostgreSQL is away.
    if (!lease && !warned) log?.warn({ event: 'library.hold_lost' }, 'lost the library lock with its connection and cannot take it again yet; a `docsearch migrate` started meanwhile would not see this replica');
    warned = !lease;
  };
  const timer = setInterval(() => void retake(), retakeMs);
  timer.unref();
  return {
    async release() {
      stopped = true;
      clearInterval(timer);
      await lease?.release();
    },
  };
}
