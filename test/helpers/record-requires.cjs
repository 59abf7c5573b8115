// Loaded with `node --require` into a process under test (its worker threads load it too): appends to the file
// $DOCSEARCH_TEST_REQUIRES_FILE, each line opening with the id of the thread it happened in (0: the main thread),
//   `<thread> <path>`                    a module it loaded through require() — createRequire's included, which
//                                        record-imports.mjs's ESM hook does not see — once a path and thread;
//   `<thread> import <specifier>`        a package it imported by name (record-imports-hook.mjs, for this thread);
//   `<thread> worker <id> <script>`      a worker thread it started, and on what (`eval` for code).
'use strict';
const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
const workerThreads = require('node:worker_threads');

const file = process.env.DOCSEARCH_TEST_REQUIRES_FILE;
if (file) {
  const thread = workerThreads.threadId;
  const record = (line) => appendFileSync(file, `${thread} ${line}\n`);

  const load = Module._load;
  const seen = new Set();
  Module._load = function recordedLoad(request, parent, isMain) {
    const exports = load.apply(this, arguments);
    if (!Module.isBuiltin(request)) {
      // Resolved after loading, so from the cache: a failed load throws above and records nothing.
      const path = Module._resolveFilename(request, parent, isMain);
      if (!seen.has(path)) {
        seen.add(path);
        record(path);
      }
    }
    return exports;
  };

  // Each thread registers its own module hooks (Node 20), so this thread's imports are told apart from others'.
  Module.register(pathToFileURL(`${__dirname}/record-imports-hook.mjs`), { data: { file, prefix: `${thread} import ` } });

  // A subclass in the module's place; the sync makes `import { Worker } from 'node:worker_threads'` get it too.
  const Worker = workerThreads.Worker;
  workerThreads.Worker = class RecordedWorker extends Worker {
    constructor(script, options) {
      super(script, options);
      record(`worker ${this.threadId} ${options?.eval ? 'eval' : String(script)}`);
    }
  };
  Module.syncBuiltinESMExports();
}
