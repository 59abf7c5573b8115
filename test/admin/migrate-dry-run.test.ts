/**
 * `docsearch migrate --dry-run` beside the daemon that serves its source: it answers with what a migration would
 * move instead of refusing, and it writes nothing there. Traced with strace: no system call of it (threads and
 * children included) writes to, truncates, creates, removes, renames or re-modes a file of the data directory.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { missingFile } from '../helpers/requirement.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const STRACE = '/usr/bin/strace';
const SKIP = missingFile(STRACE, 'apt-get install -y strace');

/** System calls that change a file through a descriptor (`-y` names its path) or by name. */
const BY_FD = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2', 'ftruncate', 'fallocate', 'fchmod', 'fchown']);
const BY_NAME = new Set(['mkdir', 'mkdirat', 'rmdir', 'unlink', 'unlinkat', 'rename', 'renameat', 'renameat2', 'link', 'linkat', 'symlink', 'symlinkat', 'truncate', 'chmod', 'fchmodat', 'chown', 'fchownat', 'utimensat']);
const TRACED = [...BY_FD, ...BY_NAME, 'open', 'openat', 'creat'].join(',');

/** Every file and folder under `dir`, by path. */
const listing = (dir: string) => new Set(readdirSync(dir, { recursive: true }).map((p) => join(dir, String(p))));

describe.skipIf(SKIP !== null)(`migrate --dry-run while the daemon serves the source${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let d: Daemon;
  const work = mkdtempSync(join(tmpdir(), 'docsearch-dry-run-'));
  beforeAll(async () => {
    d = await startDaemon();
    const user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'herons.txt', bytes: Buffer.from('Herons wait motionless in the shallows for fish.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    removeDir(d.dataDir);
    removeDir(work);
  });

  it('reports what would move, and no system call of it changes a file of the data directory', async () => {
    const target = join(work, 'target');
    const trace = join(work, 'trace');
    const before = listing(d.dataDir);
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      // -ff: a file a thread, so no call is split into "<unfinished ...>" and "resumed" halves the pattern below misses.
      const proc = spawn(STRACE, ['-ff', '-qq', '-y', '-o', trace, '-e', `trace=${TRACED}`, process.execPath, BIN, 'migrate', '--from', d.dataDir, '--to', target, '--dry-run', '--json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      proc.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ dry_run: true, target_state: 'fresh' });
    expect(Object.fromEntries((summary.tables as { name: string; rows: number }[]).map((t) => [t.name, t.rows]))).toMatchObject({ users: 1, documents: 1 });
    expect(existsSync(target), 'the target is not made').toBe(false);

    const traced = readdirSync(work).filter((f) => f.startsWith('trace.'));
    expect(traced.length, 'a trace file a thread').toBeGreaterThan(1);
    const lines = traced.flatMap((f) => readFileSync(join(work, f), 'utf8').split('\n'));
    expect(lines.filter((line) => /<unfinished \.\.\.>|resumed>/.test(line)), 'no call split in two').toEqual([]);
    const calls = lines
      .map((line) => /^(?:\d+\s+)?(\w+)\((.*)\)\s+=\s+(-?\d+)/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && m[3] !== '-1' && m[2]!.includes(d.dataDir));
    expect(calls.length, 'the trace saw the dry run read the data directory').toBeGreaterThan(0);
    const changes = calls.filter(([, name, args]) => {
      const fd = /^\d+<([^>]*)>(?:, (\d+), (\d+))?/.exec(args!);
      // SQLite run as root gives the WAL files it opens the database's owner: they have it already.
      if (name === 'fchown' && fd?.[1] && statSync(fd[1]).uid === Number(fd[2]) && statSync(fd[1]).gid === Number(fd[3])) return false;
      if (BY_FD.has(name!)) return fd?.[1]?.startsWith(d.dataDir) ?? false;
      if (BY_NAME.has(name!)) return true;
      // An open that creates or truncates: O_CREAT of a path that was not there, O_TRUNC, O_EXCL.
      const path = /"([^"]+)"/.exec(args!)?.[1];
      return /O_TRUNC|O_EXCL/.test(args!) || (/O_CREAT/.test(args!) && path !== undefined && !before.has(path));
    });
    expect(changes.map((m) => m[0])).toEqual([]);
    expect((await api(d, '/api/v1/health')).status, 'the daemon serves on').toBe(200);
  }, 180_000);
});
