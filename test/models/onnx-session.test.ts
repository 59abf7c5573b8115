/**
 * OnnxSession and GraphBuilder on a tiny graph the test builds: y = table[ids] · 2, with the table either inline
 * or in an external-data file.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../src/models/onnx/graph-builder.js';
import { OnnxSession } from '../../src/models/onnx/session.js';

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
});
