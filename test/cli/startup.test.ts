import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

describe('start-up: client commands do not load the server', () => {
  const COMMANDS = [['--version'], ['completion bash']];

  it.each(COMMANDS)('docsearch %s imports no package but commander, and no module of the server', { timeout: 60_000 }, (args) => {
    // The precise check: what the process imports by package name (the module hook of test/helpers/record-imports.mjs).
    // The server would bring koa, better-sqlite3, LanceDB and ONNX Runtime; the filter schemas zod.
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-startup-'));
    const file = join(dir, 'imports.txt');
    const coverage = join(dir, 'coverage');
    const hook = pathToFileURL(join(REPO, 'test/helpers/record-imports.mjs')).href;
    // NODE_V8_COVERAGE: V8 writes, at exit, every script the process compiled, so a client grown heavy without
    // importing a package (the server's modules loaded eagerly cost ≈ 15× the CPU of `node -e 0`, docs/cli.md) shows
    // by the rooms of dist/ it loads: the client's own room and those it may import (docs/DEVELOPING.md), no other.
    execFileSync('bash', ['-c', `${process.execPath} --import ${hook} ${BIN} ${args} >/dev/null`], {
      env: { ...process.env, ...cliEnv(null), DOCSEARCH_TEST_IMPORTS_FILE: file, NODE_V8_COVERAGE: coverage },
    });
    const imported = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((specifier) => specifier.split('/')[0]));
    const scripts = readdirSync(coverage).flatMap((f) => (JSON.parse(readFileSync(join(coverage, f), 'utf8')) as { result: { url: string }[] }).result.map((r) => r.url));
    rmSync(dir, { recursive: true, force: true });
    expect([...imported]).toEqual(['commander']);
    const dist = pathToFileURL(join(REPO, 'dist')).href;
    const rooms = new Set(scripts.filter((url) => url.startsWith(`${dist}/`)).map((url) => url.slice(dist.length + 1).split('/')[0]));
    expect(rooms).toContain('cli');
    expect([...rooms].filter((room) => !['main.js', 'cli', 'core', 'mcp', 'terminal'].includes(room!))).toEqual([]);
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
