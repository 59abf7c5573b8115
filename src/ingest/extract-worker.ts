/**
 * Worker-thread entry for extract.ts: parses one document and posts the result. Parsers and their libraries
 * may log to the console and throw from timers; the console is silenced here and a stray throw ends this
 * worker, which the parent reports as the document's failure.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isParseError } from './parsers/errors.js';
import { PARSERS } from './parsers/index.js';
import type { DocumentType, ParseOptions } from './types.js';

export interface WorkerInput {
  type: DocumentType;
  bytes: Uint8Array;
  options: ParseOptions;
}

export type WorkerOutput =
  | { ok: true; doc: import('./types.js').ParsedDocument }
  | { ok: false; parseError: boolean; message: string };

const silent = (): void => {};
console.log = silent;
console.info = silent;
console.warn = silent;
console.error = silent;
console.debug = silent;
console.trace = silent;

const input = workerData as WorkerInput;
const port = parentPort!;

try {
  const parser = PARSERS[input.type];
  if (!parser) throw new Error(`no parser for ${String(input.type)}`);
  const doc = await parser(input.bytes, input.options);
  port.postMessage({ ok: true, doc } satisfies WorkerOutput);
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  port.postMessage({ ok: false, parseError: isParseError(err), message } satisfies WorkerOutput);
}
