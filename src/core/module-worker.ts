/**
 * A worker thread whose entry is a module of this package (`moduleUrl`, usually the caller's own
 * `import.meta.url`). Under vitest/tsx that module is TypeScript source, and Node 20 does not apply `--import tsx`
 * to a worker's entry module, so the worker registers tsx itself and then imports it; the built daemon runs
 * dist/*.js and takes the plain branch.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startModuleWorker(moduleUrl: string, options: WorkerOptions = {}): Worker {
  if (!moduleUrl.endsWith('.ts')) return new Worker(new URL(moduleUrl), options);
  const tsx = pathToFileURL(createRequire(moduleUrl).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(moduleUrl)}); })`, { ...options, eval: true });
}
