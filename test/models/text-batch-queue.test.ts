import { describe, expect, it } from 'vitest';
import { ForegroundGate } from '../../src/core/foreground.js';
import { TextBatchQueue } from '../../src/models/text-batch-queue.js';

interface Item {
  size: number;
  name: string;
}
const items = (prefix: string, n: number, size = 100): Item[] => Array.from({ length: n }, (_, i) => ({ size, name: `${prefix}${i}` }));

/** A queue whose model is a recorder: what each batch held, in order. */
function recorder(batchSize: number) {
  const batches: string[][] = [];
  const queue = new TextBatchQueue<Item>('test', 10_000, batchSize, async (batch, lane) => {
    batches.push(batch.map((i) => `${lane}:${i.name}`));
    await new Promise((r) => setTimeout(r, 5));
  });
  return { queue, batches };
}

describe('TextBatchQueue', () => {
  it('fills one batch from several small requests', async () => {
    const { queue, batches } = recorder(8);
    const blocker = queue.push('low', items('x', 1)); // runs alone while the others queue up
    await Promise.all([blocker, queue.push('low', items('a', 2)), queue.push('low', items('b', 2)), queue.push('low', items('c', 3))]);
    expect(batches).toHaveLength(2);
    expect(batches[1]!.sort()).toEqual(['low:a0', 'low:a1', 'low:b0', 'low:b1', 'low:c0', 'low:c1', 'low:c2']);
  });

  it('leaves a much longer text out of a batch rather than pad the others to its length', async () => {
    const { queue, batches } = recorder(8);
    const blocker = queue.push('low', items('x', 1));
    await Promise.all([blocker, queue.push('low', [...items('short', 3, 100), ...items('long', 1, 400)]), queue.push('low', items('near', 2, 105))]);
    // 4 rows of 400 would be 75 % padding: the long text runs alone, the short ones together.
    expect(batches.slice(1).map((b) => b.sort().join(' ')).sort()).toEqual(['low:long0', 'low:near0 low:near1 low:short0 low:short1 low:short2']);
  });

  it("gives a late small request a turn before a big request's backlog", async () => {
    const { queue, batches } = recorder(4);
    const big = queue.push('low', items('big', 400));
    await new Promise((r) => setTimeout(r, 12)); // a couple of big batches are through
    await queue.push('low', items('small', 2));
    const before = batches.length;
    await big;
    // The small request was served within two batches of arriving, not after the 100 batches of the big one.
    expect(batches.length - before).toBeGreaterThan(90);
  });

  it('starts no passage batch while a search is in flight, and queries still run', async () => {
    const gate = new ForegroundGate(10_000);
    const started: string[] = [];
    const queue = new TextBatchQueue<Item>('test', 100, 8, async (batch, lane) => {
      started.push(`${lane}:${batch.length}`);
    }, gate);
    const leave = gate.enter();
    const low = queue.push('low', items('p', 3));
    await queue.push('high', items('q', 1));
    const more = queue.push('low', items('r', 2)); // arrives during the wait: joins the same batch
    await new Promise((r) => setTimeout(r, 30));
    expect(started).toEqual(['high:1']);
    leave();
    await Promise.all([low, more]);
    expect(started).toEqual(['high:1', 'low:5']);
  });

  it('runs the high lane beside a running low batch', async () => {
    const started: string[] = [];
    let releaseLow!: () => void;
    const queue = new TextBatchQueue<Item>('test', 100, 8, async (batch, lane) => {
      started.push(lane);
      if (lane === 'low') await new Promise<void>((r) => (releaseLow = r));
    });
    const low = queue.push('low', items('p', 8));
    await new Promise((r) => setTimeout(r, 5));
    await queue.push('high', items('q', 1)); // resolves although the low batch is still running
    expect(started).toEqual(['low', 'high']);
    releaseLow();
    await low;
  });

  it('fails a request whose batch failed, and only that request', async () => {
    const queue = new TextBatchQueue<Item>('test', 100, 2, async (batch) => {
      if (batch.some((i) => i.name === 'bad0')) throw new Error('model error');
    });
    const bad = queue.push('low', items('bad', 3, 500));
    const good = queue.push('low', items('good', 2, 10));
    await expect(bad).rejects.toThrow('model error');
    await expect(good).resolves.toBeUndefined();
  });

  it('refuses work beyond its bound with a transient error', async () => {
    const queue = new TextBatchQueue<Item>('test', 10, 4, () => new Promise((r) => setTimeout(r, 20)));
    const first = queue.push('low', items('a', 8));
    await expect(queue.push('low', items('b', 8))).rejects.toMatchObject({ transient: true });
    await first;
  });
});
