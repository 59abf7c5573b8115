/**
 * Operator commands that cannot miss (issue 61): a data directory (or database) that holds no library is refused
 * and nothing is made in it, unless --init; and a link an operator command prints reaches the daemon that serves the
 * data directory, whatever port it was started on (it records its public URL beside the lock it holds).
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { createServer } from 'node:net';

const REFUSAL = (dir: string) => `no library at ${dir}; pass --data-dir, or --init to make one`;

/** 7711, the port of the walk, when it is free here; else any free one. */
async function port7711(): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(7711, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  return free ? 7711 : freePort();
}

describe('operator commands refuse a data directory that holds no library', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-empty-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach(removeDir));

  it('users invite, users add, groups create and clients add: exit non-zero, name the remedy, make nothing', async () => {
    const empty = tempDir();
    const missing = join(tempDir(), 'not-made');
    for (const args of [
      ['users', 'invite', 'x@example.com', '--data-dir', empty],
      ['users', 'list', '--data-dir', empty],
      ['users', 'add', 'y@example.com', '--data-dir', empty],
      ['groups', 'create', 'editors', '--data-dir', empty],
      ['clients', 'add', '--name', 'App', '--redirect-uri', 'https://app.example.com/cb', '--data-dir', empty],
      ['users', 'invite', 'x@example.com', '--data-dir', missing],
    ]) {
      const res = await runCli(args, { input: 'a long enough password\n' });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
      expect(res.stderr).toContain(REFUSAL(args.at(-1)!));
      expect(res.stdout).toBe('');
    }
    expect(readdirSync(empty)).toEqual([]);
    expect(existsSync(missing)).toBe(false);
  });

  it('without --data-dir, the default data directory is refused the same when it holds nothing (the README walk)', async () => {
    const home = tempDir();
    const res = await runCli(['users', 'invite', 'carol@example.com'], { env: { HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config'), DOCSEARCH_DATA_DIR: '' } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(REFUSAL(join(home, 'data', 'docsearch')));
    expect(readdirSync(home)).toEqual([]);
  });

  it('--init makes the library', async () => {
    const dir = tempDir();
    const res = await runCli(['groups', 'create', 'editors', '--data-dir', dir, '--init']);
    expect(res.code, res.stderr).toBe(0);
    expect(readdirSync(dir)).toContain('docsearch.db');
    expect((await runCli(['groups', 'list', '--data-dir', dir])).stdout).toContain('editors');
  });
});

describe('a printed link reaches the running daemon', () => {
  let d: Daemon;
  let port: number;
  beforeAll(async () => {
    port = await port7711();
    d = await startDaemon({ args: ['--port', String(port)] });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('users invite prints the URL of the daemon on --port 7711, not the default 7411', async () => {
    const res = await runCli(['users', 'invite', 'x@example.com', '--data-dir', d.dataDir], { env: d.env });
    expect(res.code, res.stderr).toBe(0);
    const link = res.stdout.trim();
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/invite\\?token=`));
    expect(res.stderr).not.toContain('warning');
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('x@example.com');
  });

  it('once the daemon has stopped, the link says where it assumes one will listen, and warns', async () => {
    await d.stop();
    const res = await runCli(['users', 'invite', 'z@example.com', '--data-dir', d.dataDir], { env: d.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:7411\/invite\?token=/);
    expect(res.stderr).toContain(`warning: no daemon is running on ${d.dataDir}`);
  });
});
