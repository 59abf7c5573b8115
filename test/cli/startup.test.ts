import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/daemon.js';
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
  const COMMANDS = [['--version'], ['completion bash']];

  it.each(COMMANDS)('docsearch %s imports no package but commander', { timeout: 60_000 }, (args) => {
    // The precise check: what the process imports by package name (the module hook of test/helpers/record-imports.mjs).
    // The server would bring koa, better-sqlite3, LanceDB and ONNX Runtime; the filter schemas zod.
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-startup-'));
    const file = join(dir, 'imports.txt');
    const hook = pathToFileURL(join(REPO, 'test/helpers/record-imports.mjs')).href;
    execFileSync('bash', ['-c', `${process.execPath} --import ${hook} ${BIN} ${args} >/dev/null`], {
      env: { ...process.env, ...cliEnv(null), DOCSEARCH_TEST_IMPORTS_FILE: file },
    });
    const imported = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((specifier) => specifier.split('/')[0]));
    rmSync(dir, { recursive: true, force: true });
    expect([...imported]).toEqual(['commander']);
  });

  it.each(COMMANDS)('docsearch %s costs at most 5× the CPU of `node -e 0` (loading the server: ~15×)', { timeout: 120_000 }, (args) => {
    // The least of three batches each: another test file on the same 2 cores inflates a batch's CPU time (caches,
    // frequency), never shrinks it, so the minimum is the figure nearest the command's own cost.
    const least = (command: string) => Math.min(...Array.from({ length: 3 }, () => cpuSeconds(command, RUNS)));
    const node = least(`${process.execPath} -e 0`);
    const cli = least(`${process.execPath} ${BIN} ${args}`);
    // The ratio depends on the CPU: 3.0–3.1× on an AMD EPYC, 3.6× on the CI machine (about 110 small client modules,
    // commander the only package). The import check above is the exact one; this bound catches a client that grows
    // heavy without importing a package (loading the server eagerly cost ≈ 15×).
    expect(cli / node).toBeLessThanOrEqual(5);
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
