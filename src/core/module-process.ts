/**
 * A child process whose entry is a module of this package (`moduleUrl`, usually the caller's own `import.meta.url`),
 * for one-off work whose peak memory must go back to the system when it ends: an exited process's memory does,
 * while a worker thread's freed malloc arenas stay mapped in the daemon. Under vitest/tsx that module is TypeScript
 * source, so the child is started with tsx's loader (as module-worker.ts does for workers); the built daemon runs
 * dist/*.js and needs none.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function forkModule(moduleUrl: string, args: string[]): ChildProcess {
  const execArgv = moduleUrl.endsWith('.ts') ? ['--import', pathToFileURL(createRequire(moduleUrl).resolve('tsx')).href] : [];
  return fork(fileURLToPath(moduleUrl), args, { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}
