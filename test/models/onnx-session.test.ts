/**
 * OnnxSession and GraphBuilder on a tiny graph the test builds: y = table[ids] · 2, with the table either inline
 * or in an external-data file.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../src/models/onnx/graph-builder.js';
import { OnnxSession } from '../../src/models/onnx/session.js';
import { REPO } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-onnx-session-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TABLE = Float32Array.from({ length: 8192 }, (_, i) => i / 4);

function tinyGraph(name: string, external: boolean): string {
  const g = new GraphBuilder('tiny');
  const ids = g.input('ids', 'int64', ['n']);
  g.op('Mul', [g.op('Gather', [g.floats('table', [TABLE.length], TABLE), ids], { axis: { int: 0 } }), g.scalar('two', 2)], {}, 'y');
  g.output('y', 'float32', ['n']);
  const { model, data } = g.encodeWith(external ? { external: { location: `${name}.weights`, minBytes: 1024 } } : {});
  writeFileSync(join(dir, `${name}.onnx`), model);
  if (data.length) writeFileSync(join(dir, `${name}.weights`), Buffer.concat(data));
  return join(dir, `${name}.onnx`);
}

async function lookup(session: OnnxSession, ids: number[]): Promise<number[]> {
  const out = await session.run({ ids: { type: 'int64', data: BigInt64Array.from(ids, BigInt), dims: [ids.length] } });
  return [...(out.y!.data as Float32Array)];
}

describe('OnnxSession', () => {
  it('opens a session again after every session in the process has closed', async () => {
    // Node unloads a native addon when the last thread that loaded it exits, and onnxruntime's cannot register a
    // second time: the passage session, released when idle, must still reopen.
    const path = tinyGraph('reopen', false);
    const first = await OnnxSession.open(path, { intraOpThreads: 1 });
    expect(await lookup(first, [4])).toEqual([2]);
    await first.close();
    const second = await OnnxSession.open(path, { intraOpThreads: 1 });
    try {
      expect(await lookup(second, [4, 8191])).toEqual([2, 8191 / 2]);
    } finally {
      await second.close();
    }
  });

  it('loads tensors from an external-data file beside the graph', async () => {
    const path = tinyGraph('external', true);
    // The 32 KiB table is in the weights file, not the protobuf; the scalar stays inline.
    expect(statSync(path).size).toBeLessThan(1024);
    const { onnx } = onnxProto;
    const model = onnx.ModelProto.decode(readFileSync(path));
    const table = model.graph!.initializer!.find((t) => t.name === 'table')!;
    expect(table.dataLocation).toBe(onnx.TensorProto.DataLocation.EXTERNAL);
    expect(Object.fromEntries(table.externalData!.map((e) => [e.key, e.value]))).toEqual({ location: 'external.weights', offset: '0', length: String(TABLE.byteLength) });
    const session = await OnnxSession.open(path, { intraOpThreads: 1 });
    try {
      expect(await lookup(session, [0, 1, 8000])).toEqual([0, 0.5, 4000]);
    } finally {
      await session.close();
    }
  });

  it('closed while a run is in flight, lets the run finish before ending its worker: the process lives on', () => {
    // x · W 12 times over (W 1024×1024, 26 GFLOP): ~110 ms on one AVX-512 core, 3–7 s on a slow or busy one. Ending the
    // worker under the run aborted the process ("terminate called after throwing an instance of 'Napi::Error'"): the
    // daemon's shutdown did that while a document was being embedded. In a child process, which an abort kills.
    // Queued runs (a first one timed) make about 1.5 s of work, so a run is in flight when the session closes 50 ms in
    // however late the timer (twelve of 768×768 took 46 ms on the fast machine: the run had resolved before the close,
    // and a CI run failed so), yet at least three, which close() waits for within its 30 s on the slow one (three runs
    // of 48 took 39 s there, and close() ended the worker under the last).
    const N = 1024;
    const g = new GraphBuilder('slow');
    let x = g.input('x', 'float32', [N, N]);
    const w = g.floats('w', [N, N], Float32Array.from({ length: N * N }, (_, i) => ((i % 7) - 3) / (N * 4)));
    for (let i = 0; i < 12; i++) x = g.op('MatMul', [x, w], {}, i === 11 ? 'y' : undefined);
    g.output('y', 'float32', [N, N]);
    const path = join(dir, 'slow.onnx');
    writeFileSync(path, g.encodeWith({}).model);
    const child = `
      const { OnnxSession } = await import(${JSON.stringify(join(REPO, 'dist/models/onnx/session.js'))});
      const session = await OnnxSession.open(${JSON.stringify(path)}, { intraOpThreads: 1 });
      const feeds = () => ({ x: { type: 'float32', data: new Float32Array(${N * N}).fill(1), dims: [${N}, ${N}] } });
      const t0 = performance.now();
      await session.run(feeds());
      const queued = Math.max(3, Math.ceil(1500 / (performance.now() - t0)));
      const runs = Array.from({ length: queued }, () => session.run(feeds()));
      const run = runs.at(-1).then(() => 'finished', (err) => err.message);
      for (const r of runs) r.catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
      await session.close();
      console.log('run:', await run);
      await new Promise((r) => setTimeout(r, 1000));
      console.log('alive');`;
    writeFileSync(join(dir, 'close-mid-run.mjs'), child);
    const out = spawnSync(process.execPath, [join(dir, 'close-mid-run.mjs')], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '' } });
    expect(out.stderr).not.toContain('terminate called');
    expect({ status: out.status, signal: out.signal, stdout: out.stdout }).toEqual({ status: 0, signal: null, stdout: 'run: onnx session is closed\nalive\n' });
  }, 150_000);
});
