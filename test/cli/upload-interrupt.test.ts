import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addUser, BIN, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';
import { missingFile } from '../helpers/requirement.js';

/** A text long enough that processing takes seconds: the wait is still going when the daemon stops or Ctrl-C comes. */
function bigFile(name: string, lines = 3000): string {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-interrupt-'));
  const text = Array.from({ length: lines }, (_, i) => `Line ${i} of ${name} names shipment ${i * 13} and its port dues.`);
  writeFileSync(join(dir, name), text.join('\n\n'));
  return join(dir, name);
}

const until = async (what: string, ok: () => boolean, ms = 60_000) => {
  for (const t0 = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 100))) if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
};

/** Issue 44, defect 6: interruptions during `upload --wait`. */
describe('upload --wait rides through interruptions (issue 44)', () => {
  const daemons: Daemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) {
      // Killed: a clean stop finishes the slice being embedded first (5–20 s on a loaded machine), no part of these tests.
      await d.stop('SIGKILL');
      removeDir(d.dataDir);
    }
  });

  it('a daemon stopped mid-wait and restarted on the same data and port: the CLI says so once, retries, and reports ready', { timeout: 240_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const user = await addUser(d);
    // A third of the others' text: it is processed whole again after the restart, and the stop comes right after
    // the upload, while its first slices are still being embedded.
    const file = bigFile('restart.txt', 1000);
    const cli = spawn(process.execPath, [BIN, 'upload', file, '--wait'], { env: { ...process.env, ...cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => cli.once('exit', res));
    await until('uploaded', () => stderr.includes('uploaded as doc_'));
    await d.stop();
    // Restarted once the CLI has met the stopped daemon (it polls every 500 ms), not after a fixed pause.
    await until('lost contact said', () => stderr.includes('lost contact'));
    const again = await startDaemon({ dataDir: d.dataDir, args: ['--port', new URL(d.url).port] });
    daemons.push(again);
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 200_000))]);
    expect(stderr).toMatch(/warning: lost contact with http:\/\/127\.0\.0\.1:\d+ \([^)]+\); the file still processing is already on the server\. Retrying for up to 60 s…\n/);
    expect(stderr.match(/lost contact/g)).toHaveLength(1);
    expect(stderr).toMatch(/restart\.txt: ready \(\d+ chunks\)\n/);
    expect(stderr).toContain('done: 1 file ready to search\n');
    expect(stderr).not.toContain('is `docsearch serve` running?');
    expect(code).toBe(0);
  });

  it('a daemon that stays away: the wait ends naming what the server accepted and how to follow it', { timeout: 120_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const user = await addUser(d);
    const file = bigFile('gone.txt');
    const cli = spawn(process.execPath, [BIN, 'upload', file, '--wait', '--timeout', '8'], { env: { ...process.env, ...cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => cli.once('exit', res));
    await until('uploaded', () => stderr.includes('uploaded as doc_'));
    const id = /uploaded as (doc_\w+)/.exec(stderr)![1];
    // Stopped, and not waited for: it answers nothing more while it finishes the slice being embedded.
    void d.stop();
    expect(await exited).toBe(1);
    expect(stderr).toContain('warning: lost contact with');
    expect(stderr).toMatch(new RegExp(`error: gave up waiting after 8 s \\(${d.url.replace(/[.:/]/g, '\\$&')} has not answered for \\d+ s\\); still processing on the server:\\n  ${file.replace(/[.]/g, '\\.')} \\(${id}\\)\\n`));
    expect(stderr).toContain('hint: follow them with `docsearch documents list --status processing`');
  });

  it('a daemon that goes silent mid-wait (stopped, holding its connections): --timeout still ends the wait on time', { timeout: 120_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const user = await addUser(d);
    const file = bigFile('silent.txt');
    const cli = spawn(process.execPath, [BIN, 'upload', file, '--wait', '--timeout', '10'], { env: { ...process.env, ...cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => cli.once('exit', res));
    await until('uploaded', () => stderr.includes('uploaded as doc_'));
    const started = Date.now();
    const id = /uploaded as (doc_\w+)/.exec(stderr)![1];
    // SIGSTOP: the port stays open and the kernel takes connections, but nothing answers them.
    d.proc.kill('SIGSTOP');
    try {
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still waiting'), 45_000))]);
      expect(code, stderr).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(stderr).toMatch(/warning: lost contact with http:\/\/127\.0\.0\.1:\d+ \(no answer\); the file still processing is already on the server/);
      expect(stderr).toMatch(new RegExp(`error: gave up waiting after 10 s \\(${d.url.replace(/[.:/]/g, '\\$&')} has not answered for ([5-9]|1\\d) s\\); still processing on the server:\\n  ${file.replace(/[.]/g, '\\.')} \\(${id}\\)\\n`));
    } finally {
      cli.kill('SIGKILL');
      d.proc.kill('SIGCONT');
    }
  });

  // `script` (util-linux) gives the CLI a pseudo-terminal: ^C typed into it is the terminal's interrupt, as a person's is.
  it.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('Ctrl-C during the wait, in a terminal: names the documents still processing on the server, exit 130', { timeout: 120_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const user = await addUser(d);
    const file = bigFile('ctrl-c.txt');
    const env = { ...process.env, ...cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }), TERM: 'xterm', COLUMNS: '160' };
    const proc = spawn('script', ['-qefc', `${process.execPath} ${BIN} upload ${file} --wait`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', r));
    // The progress board shows the server processing the file.
    await until('processing on screen', () => /processing\s+\[/.test(out));
    proc.stdin.write('\x03');
    const code = await exited;
    const text = out.replace(/\r/g, '');
    expect(text).toMatch(/stopped waiting; 1 document still processing, which continues on the server:\n {2}\S*ctrl-c\.txt \(doc_\w+\)\n/);
    expect(text).toContain('hint: follow them with `docsearch documents list --status processing`');
    expect(text).not.toContain('error: stopped');
    expect(code).toBe(130);
  });
});
