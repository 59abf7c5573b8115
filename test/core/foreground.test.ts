import { describe, expect, it, vi } from 'vitest';
import { ForegroundGate } from '../../src/core/foreground.js';

const settledWithin = async (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('ForegroundGate', () => {
  it('lets background work through at once when nothing runs in the foreground', async () => {
    expect(await settledWithin(new ForegroundGate(10_000).yieldToForeground(), 20)).toBe(true);
  });

  it('holds background work until the last foreground task ends', async () => {
    const gate = new ForegroundGate(10_000);
    const a = gate.enter();
    const b = gate.enter();
    const waiting = gate.yieldToForeground();
    a();
    a(); // leaving twice counts once
    expect(await settledWithin(waiting, 30)).toBe(false);
    b();
    expect(await settledWithin(waiting, 30)).toBe(true);
  });

  it('never holds background work longer than its longest wait', async () => {
    // On the gate's own clock (fake timers), not the machine's: held through 49 ms, let go at 50.
    vi.useFakeTimers();
    try {
      const gate = new ForegroundGate(50);
      gate.enter(); // a search that never ends
      let through = false;
      void gate.yieldToForeground().then(() => (through = true));
      await vi.advanceTimersByTimeAsync(49);
      expect(through).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(through).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts a task run through run() as foreground until it settles, also when it fails', async () => {
    const gate = new ForegroundGate(10_000);
    let finish!: () => void;
    const task = gate.run(() => new Promise<void>((r) => (finish = r)));
    const waiting = gate.yieldToForeground();
    expect(await settledWithin(waiting, 30)).toBe(false);
    finish();
    await task;
    expect(await settledWithin(waiting, 30)).toBe(true);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await settledWithin(gate.yieldToForeground(), 20)).toBe(true);
  });
});
