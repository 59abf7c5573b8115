// What `npm install` leaves in node_modules that the product never loads (issue #22: 1.2 GB, of which ~330 MB of
// optional dependencies of @lancedb/lancedb and ~190 MB of other platforms' onnxruntime binaries).
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const require = createRequire(join(repo, 'package.json'));

describe('install weight', () => {
  it("leaves out @lancedb/lancedb's optional embedding providers (package.json overrides)", () => {
    // sharp is a dependency of docsearch itself now (image uploads): only what transformers.js alone would bring.
    for (const name of ['@huggingface/transformers', 'onnxruntime-web', 'openai']) {
      expect(existsSync(join(repo, 'node_modules', name)), name).toBe(false);
    }
  });

  it("keeps only this platform's onnxruntime-node binary (the postinstall script)", () => {
    const bin = join(dirname(require.resolve('onnxruntime-node/package.json')), 'bin', 'napi-v6');
    expect(readdirSync(bin)).toEqual([process.platform]);
    expect(readdirSync(join(bin, process.platform))).toEqual([process.arch]);
    expect(existsSync(join(bin, process.platform, process.arch, 'onnxruntime_binding.node'))).toBe(true);
  });
});
