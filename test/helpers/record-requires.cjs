// Loaded with `node --require` into a process under test (its worker threads load it too): appends the resolved
// path of each module the process loads through require() — createRequire's included, which record-imports.mjs's
// ESM hook does not see — to the file $DOCSEARCH_TEST_REQUIRES_FILE, once a line per path and thread.
'use strict';
const Module = require('node:module');
const { appendFileSync } = require('node:fs');

const file = process.env.DOCSEARCH_TEST_REQUIRES_FILE;
if (file) {
  const load = Module._load;
  const seen = new Set();
  Module._load = function recordedLoad(request, parent, isMain) {
    const exports = load.apply(this, arguments);
    if (!Module.isBuiltin(request)) {
      // Resolved after loading, so from the cache: a failed load throws above and records nothing.
      const path = Module._resolveFilename(request, parent, isMain);
      if (!seen.has(path)) {
        seen.add(path);
        appendFileSync(file, `${path}\n`);
      }
    }
    return exports;
  };
}
