/**
 * Worker-thread entry for extract.ts: parses the documents it is sent, one at a time, and posts each result.
 * The pool reuses this worker for many documents, so each parser's libraries load once, with its first document. Parsers and their
 * libraries may log to the console and throw from timers; the console is silenced here and a stray throw ends this
 * worker, which the parent reports as the document's failure.
 */
import { parentPort } from 'node:worker_threads';
import { ownThreadId } from '../core/thread-cpu.js';
import { isParseError } from './parsers/errors.js';
import { PARSERS } from './parsers/index.js';
import type { ParsedType, ParseOptions } from './types.js';

export interface WorkerInput {
  /** Echoed in the answer, so an answer is never taken for another document's. */
  id: number;
  type: ParsedType;
  bytes: Uint8Array;
  options: ParseOptions;
}

export type WorkerOutput =
  | { thread: number }
  | { id: number; ok: true; doc: import('./types.js').ParsedDocument }
  | { id: number; ok: false; parseError: boolean; message: string };

const silent = (): void => {};
console.log = silent;
console.info = silent;
console.warn = silent;
console.error = silent;
console.debug = silent;
console.trace = silent;

const port = parentPort!;

// This thread's id, so extract.ts can count the processor time the parse uses (Linux /proc; elsewhere it counts wall time).
const thread = ownThreadId();
if (thread !== undefined) port.postMessage({ thread } satisfies WorkerOutput);

port.on('message', (input: WorkerInput) => {
  void (async () => {
    try {
      const load = PARSERS[input.type];
      if (!load) throw new Error(`no parser for ${String(input.type)}`);
      const doc = await (await load())(input.bytes, { ...input.options, type: input.type });
      port.postMessage({ id: input.id, ok: true, doc } satisfies WorkerOutput);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      port.postMessage({ id: input.id, ok: false, parseError: isParseError(err), message } satisfies WorkerOutput);
    }
  })();
});
