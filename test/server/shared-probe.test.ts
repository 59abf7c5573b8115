import { describe, expect, it } from 'vitest';
import { type ComponentHealth, sharedProbe } from '../../src/server/health.js';

/** A probe that answers what `answers` says next, counting its runs; time is `clock.t`. */
function scripted(answers: ComponentHealth['status'][]) {
  const clock = { t: 0 };
  let runs = 0;
  const probe = sharedProbe(
    async () => {
      runs++;
      return { status: answers.shift() ?? 'up' };
    },
    5000,
    () => clock.t,
  );
  return { clock, probe, runs: () => runs };
}

describe('sharedProbe (health of a remote engine, asked by load balancers several times a second)', () => {
  it('asks once for checks that arrive together, and reuses an up answer within the window', async () => {
    const s = scripted(['up', 'up']);
    const together = await Promise.all([s.probe(), s.probe(), s.probe()]);
    expect(together.map((c) => c.status)).toEqual(['up', 'up', 'up']);
    expect(s.runs()).toBe(1);
    s.clock.t = 4999;
    await s.probe();
    expect(s.runs()).toBe(1);
    s.clock.t = 5000;
    await s.probe();
    expect(s.runs()).toBe(2);
  });

  it('asks again at the next check after a down answer, so a replica is back as soon as its engine is', async () => {
    const s = scripted(['down', 'up']);
    expect((await s.probe()).status).toBe('down');
    s.clock.t = 300;
    expect((await s.probe()).status).toBe('up');
    expect(s.runs()).toBe(2);
    s.clock.t = 600;
    await s.probe();
    expect(s.runs()).toBe(2);
  });
});
