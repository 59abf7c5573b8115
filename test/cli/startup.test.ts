import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

/**
 * CPU seconds (user + system) that `runs` runs of a command cost, from bash's `times` (children's totals):
 * CPU time, not wall time, so other work on a shared machine does not skew the ratio.
 */
function cpuSeconds(command: string, runs: number): number {
  const out = execFileSync('bash', ['-c', `for i in $(seq ${runs}); do ${command} >/dev/null; done; times`], { encoding: 'utf8', env: { ...process.env, ...cliEnv(null) } });
  const children = out.trim().split('\n').at(-1)!;
  const [user, sys] = children.split(/\s+/).map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
    return Number(m[1]) * 60 + Number(m[2]);
  });
  return user! + sys!;
}

describe('start-up: client commands do not load the server', () => {
  const RUNS = 5;
  it.each([['--version'], ['completion bash']])('docsearch %s costs at most 3.5× the CPU of `node -e 0`', { timeout: 120_000 }, (args) => {
    // The least of three batches each: another test file on the same 2 cores inflates a batch's CPU time (caches,
    // frequency), never shrinks it, so the minimum is the figure nearest the command's own cost.
    const least = (command: string) => Math.min(...Array.from({ length: 3 }, () => cpuSeconds(command, RUNS)));
    const node = least(`${process.execPath} -e 0`);
    const cli = least(`${process.execPath} ${BIN} ${args}`);
    // Measured 2026-11 on a shared 2-core machine: node 0.06 s, --version 0.13 s per run (loading the server: 0.9 s).
    // With the admin, source-edit and filter commands (about 120 small modules, commander the only package) it is
    // 3.0–3.1×; loading zod as well (the filter schemas) made it 4.1×.
    expect(cli / node).toBeLessThanOrEqual(3.5);
  });

  it('the operator commands listed before loading carry the real commands\' summaries', async () => {
    const { OPERATOR_COMMANDS } = await import('../../src/main.js');
    const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: {} };
    for (const op of OPERATOR_COMMANDS) {
      const real: Command = await op.load(io, () => {});
      expect(op.summary, op.name).toBe(real.summary());
    }
  });
});
